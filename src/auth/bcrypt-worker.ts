import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';

export interface BcryptJob {
  id: number;
  op: 'hash' | 'verify';
  password: string;
  /** The stored hash (verify) or the cost (hash). */
  arg: string | number;
}

/** One bcrypt computation per message, answered as {id, result} or {id, error}. */
parentPort!.on('message', (job: BcryptJob) => {
  try {
    const result = job.op === 'hash' ? bcrypt.hashSync(job.password, job.arg as number) : bcrypt.compareSync(job.password, job.arg as string);
    parentPort!.postMessage({ id: job.id, result });
  } catch (err) {
    parentPort!.postMessage({ id: job.id, error: (err as Error).message });
  }
});
