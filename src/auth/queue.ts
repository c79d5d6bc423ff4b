/**
 * Runs at most `concurrency` tasks at once and holds at most `maxPending` waiting ones.
 * bcrypt runs on the libuv thread pool, which file I/O shares: bounding it keeps a login storm
 * from starving storage writes, and lets a queued login re-check throttling once its turn comes.
 */
export class WorkQueue {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Waiters that go before every one in `waiting`, in their own order. */
  private readonly urgent: Waiter[] = [];

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
      await new Promise<void>((go, drop) => (urgent ? this.urgent : this.waiting).push({ go, drop }));
    } else {
      this.running++;
    }
    try {
      return await task();
    } finally {
      const next = this.urgent.shift() ?? this.waiting.shift();
      // The slot passes straight to the next waiter, so `running` only drops when nobody waits.
      if (next) next.go();
      else this.running--;
    }
  }

  /** Refuses the task that joined the plain waiters last with `error`; false when none waits. */
  shed(error: Error): boolean {
    const waiter = this.waiting.pop();
    waiter?.drop(error);
    return waiter !== undefined;
  }
}

interface Waiter {
  go: () => void;
  drop: (e: Error) => void;
}
