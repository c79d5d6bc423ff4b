import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CannonJob, CannonResult, LoadJob, LoadResult, ProbeJob, ProbeResult } from './load-jobs.js';

const WORKER = fileURLToPath(new URL('./load-worker.js', import.meta.url));

/** Runs one job in a fresh load process and resolves its result; `stop` is told to the process when it settles. */
function runJob(job: LoadJob, stop?: Promise<void>): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    void stop?.then(() => child.connected && child.send('stop'));
    let answered = false;
    child.once('message', (m: { result?: LoadResult; error?: string }) => {
      answered = true;
      if (m.result) resolve(m.result);
      else reject(new Error(`load process: ${m.error}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!answered) reject(new Error(`load process exited with code ${code} before answering`));
    });
    child.send(job);
  });
}

export async function cannon(job: Omit<CannonJob, 'kind'>): Promise<CannonResult> {
  return (await runJob({ kind: 'cannon', ...job })) as CannonResult;
}

/** Load that runs until `stop` settles (at most `duration` seconds). */
export async function cannonUntil(job: Omit<CannonJob, 'kind' | 'untilStopped'>, stop: Promise<void>): Promise<CannonResult> {
  return (await runJob({ kind: 'cannon', untilStopped: true, ...job }, stop)) as CannonResult;
}

export async function probe(job: Omit<ProbeJob, 'kind'>): Promise<ProbeResult> {
  return (await runJob({ kind: 'probe', ...job })) as ProbeResult;
}
