/**
 * Runs at most `concurrency` tasks at once and holds at most `maxPending` waiting ones.
 * bcrypt runs on the libuv thread pool, which file I/O shares: bounding it keeps a login storm
 * from starving storage writes, and lets a queued login re-check throttling once its turn comes.
 */
export class WorkQueue {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Waiters that go before every one in `waiting`, in their own order. */
  private readonly urgent: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxPending: number,
  ) {}

  /** False when the queue is full and the caller should refuse the work. */
  hasRoom(): boolean {
    return this.waiting.length + this.urgent.length < this.maxPending;
  }

  /** `urgent` tasks wait only behind other urgent ones. */
  async run<T>(task: () => Promise<T>, urgent = false): Promise<T> {
    if (this.running >= this.concurrency) {
      await new Promise<void>((resolve) => (urgent ? this.urgent : this.waiting).push(resolve));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      const next = this.urgent.shift() ?? this.waiting.shift();
      // The slot passes straight to the next waiter, so `running` only drops when nobody waits.
      if (next) next();
      else this.running--;
    }
  }
}
