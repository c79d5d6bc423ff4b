import type { Held } from './held.js';
import { timerDelay } from './timing-units.js';

interface Waiting extends Held {
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * Messages each waiting on its own timer (the delay node's fixed, random and per-message
 * delays). A Set keeps arrival order, so a flush releases the oldest first.
 */
export class TimedHolds {
  private readonly waiting = new Set<Waiting>();

  constructor(private readonly released: () => void) {}

  get size(): number {
    return this.waiting.size;
  }

  hold(held: Held, ms: number): void {
    const waiting: Waiting = held;
    waiting.timer = setTimeout(() => this.release(waiting), timerDelay(ms));
    this.waiting.add(waiting);
  }

  /** Releases the oldest `count` messages now, or all of them when `count` is not a number. */
  flush(count: unknown): void {
    let n = typeof count === 'number' ? Math.floor(count) : Infinity;
    for (const held of this.waiting) {
      if (n-- <= 0) break;
      this.release(held);
    }
  }

  /** Completes every held message without sending it. */
  discard(): void {
    for (const held of this.waiting) {
      clearTimeout(held.timer);
      held.done();
    }
    this.waiting.clear();
  }

  private release(held: Waiting): void {
    clearTimeout(held.timer);
    this.waiting.delete(held);
    held.send(held.msg);
    held.done();
    this.released();
  }
}
