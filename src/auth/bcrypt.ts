import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type Bcrypt from 'bcryptjs';
import { lazy } from '../base/lazy.js';
import type { BcryptJob } from './bcrypt-worker.js';

/**
 * bcrypt off the event loop: a small pool of worker threads (one core is left to the event loop)
 * runs the pure-JS bcryptjs, so a login storm cannot stall the admin API or the flows. Hashes
 * `$2a$`, `$2b$` and `$2y$` (the same algorithm) are accepted.
 */

/** Only hashing a new password runs here (logins compare in the workers): loaded on that first use. */
const bcrypt = lazy<typeof Bcrypt>('bcryptjs');

const HASH = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
/** Workers with nothing to do for this long are stopped (a login storm should not cost memory forever). */
const IDLE_WORKER_MS = 10_000;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

class BcryptPool {
  private readonly size = Math.max(1, availableParallelism() - 1);
  private readonly workers: Worker[] = [];
  private readonly busy = new Map<Worker, number>();
  private readonly pending = new Map<number, Pending>();
  private readonly queue: BcryptJob[] = [];
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;

  run(op: BcryptJob['op'], password: string, arg: string | number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const job = { id: this.nextId++, op, password, arg };
      this.pending.set(job.id, { resolve, reject });
      this.queue.push(job);
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length) {
      const worker = this.idleWorker();
      if (!worker) return;
      const job = this.queue.shift()!;
      this.busy.set(worker, job.id);
      worker.ref();
      worker.postMessage(job);
    }
  }

  private idleWorker(): Worker | undefined {
    const idle = this.workers.find((w) => !this.busy.has(w));
    if (idle || this.workers.length >= this.size) return idle;
    const worker = new Worker(new URL('./bcrypt-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (msg: { id: number; result?: unknown; error?: string }) => this.settle(worker, msg));
    worker.on('error', (err) => this.fail(worker, err));
    worker.on('exit', () => this.fail(worker, new Error('bcrypt worker exited')));
    this.workers.push(worker);
    return worker;
  }

  private settle(worker: Worker, msg: { id: number; result?: unknown; error?: string }): void {
    this.release(worker);
    const p = this.pending.get(msg.id);
    this.pending.delete(msg.id);
    if (msg.error !== undefined) p?.reject(new Error(msg.error));
    else p?.resolve(msg.result);
    this.dispatch();
  }

  private fail(worker: Worker, err: Error): void {
    const id = this.busy.get(worker);
    this.release(worker);
    this.workers.splice(this.workers.indexOf(worker), 1);
    if (id !== undefined) {
      this.pending.get(id)?.reject(err);
      this.pending.delete(id);
    }
    this.dispatch();
  }

  private release(worker: Worker): void {
    this.busy.delete(worker);
    // An idle pool must not keep the process alive, nor hold a worker's memory once logins stop.
    worker.unref();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.retireIdle(), IDLE_WORKER_MS);
    this.idleTimer.unref();
  }

  private retireIdle(): void {
    if (this.busy.size > 0 || this.queue.length > 0) return;
    for (const worker of this.workers.splice(0)) {
      worker.removeAllListeners('exit');
      void worker.terminate();
    }
  }
}

const pool = new BcryptPool();

const normalise = (stored: string) => (stored.startsWith('$2y$') ? `$2b$${stored.slice(4)}` : stored);

function isBcryptHash(value: string): boolean {
  return HASH.test(value);
}

/** The cost factor of a hash, or undefined when it is not a bcrypt hash. */
export function costOf(stored: string): number | undefined {
  const m = HASH.exec(stored);
  return m ? Number(m[1]) : undefined;
}

export async function hash(password: string, cost: number): Promise<string> {
  return (await pool.run('hash', password, cost)) as string;
}

/** False for a wrong password or a malformed stored hash. */
export async function verify(password: string, stored: string): Promise<boolean> {
  if (!isBcryptHash(stored)) return false;
  return (await pool.run('verify', password, normalise(stored))) as boolean;
}

/** On the calling thread: for tests and tools, never on a request path. */
export function hashSync(password: string, cost: number): string {
  return bcrypt().hashSync(password, cost);
}
