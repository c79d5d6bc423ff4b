/**
 * Runs async tasks one after another. Every storage write goes through one queue so two saves never
 * interleave their temp-file/backup/rename steps, and a compare-and-swap sees the result of the
 * previous save.
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
