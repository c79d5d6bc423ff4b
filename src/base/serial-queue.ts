/**
 * Runs async tasks one at a time, in arrival order; a failing task does not block the next. Every
 * storage write goes through one so two saves never interleave their steps and a compare-and-swap
 * sees the previous save; the runtime serialises deploys with one; context stores their disk work.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // A failed task must not poison the tasks queued after it.
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every task queued so far has settled. */
  drain(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
