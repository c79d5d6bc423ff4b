type Timer = ReturnType<typeof setTimeout>;
type Callback = (...args: unknown[]) => void;

/**
 * setTimeout and setInterval as function-node code sees them: every timer is tracked so that
 * closing the node clears what the code left running, and every callback goes through `run`
 * (which applies the time limit and reports what the callback throws).
 */
export class NodeTimers {
  private readonly timeouts = new Set<Timer>();
  private readonly intervals = new Set<Timer>();

  constructor(private readonly run: (fn: Callback, args: unknown[]) => void) {
    // util.promisify(setTimeout) inside the code must resolve through a tracked timer too.
    (this.setTimeout as unknown as Record<symbol, unknown>)[Symbol.for('nodejs.util.promisify.custom')] = (after: number, value: unknown) =>
      new Promise((resolve) => this.setTimeout(resolve as Callback, after, value));
  }

  readonly setTimeout = (fn: Callback, delay?: number, ...args: unknown[]): Timer => {
    const timer: Timer = setTimeout(() => {
      this.timeouts.delete(timer);
      this.run(fn, args);
    }, delay);
    this.timeouts.add(timer);
    return timer;
  };

  readonly clearTimeout = (timer: Timer): void => {
    clearTimeout(timer);
    this.timeouts.delete(timer);
  };

  readonly setInterval = (fn: Callback, delay?: number, ...args: unknown[]): Timer => {
    const timer = setInterval(() => this.run(fn, args), delay);
    this.intervals.add(timer);
    return timer;
  };

  readonly clearInterval = (timer: Timer): void => {
    clearInterval(timer);
    this.intervals.delete(timer);
  };

  clearAll(): void {
    for (const t of this.timeouts) clearTimeout(t);
    for (const t of this.intervals) clearInterval(t);
    this.timeouts.clear();
    this.intervals.clear();
  }
}
