/**
 * Whether the running flows are between two configurations — not started yet, or being stopped and
 * started again by a deploy — and a promise for the moment they run again. The HTTP layer holds
 * requests that find no route until then, so a route being replaced answers late instead of 404.
 * Transitions may overlap (start-up and the deploys queued behind it): the promise settles when
 * the last one ends.
 */
export class FlowTransition {
  private open = 0;
  private settled: Promise<void> | undefined;
  private resolve: (() => void) | undefined;

  begin(): void {
    if (this.open++ === 0) this.settled = new Promise((resolve) => (this.resolve = resolve));
  }

  end(): void {
    if (this.open === 0 || --this.open > 0) return;
    const resolve = this.resolve;
    this.settled = undefined;
    this.resolve = undefined;
    resolve?.();
  }

  /** Runs `work` as one transition. */
  async during<T>(work: () => Promise<T>): Promise<T> {
    this.begin();
    try {
      return await work();
    } finally {
      this.end();
    }
  }

  /** Resolves when no transition is under way; undefined when none is now. */
  get pending(): Promise<void> | undefined {
    return this.settled;
  }
}
