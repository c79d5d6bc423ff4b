import { timerDelay } from './timing-units.js';

type Timer = ReturnType<typeof setTimeout>;

/**
 * The delay node's burst limit: at most `burst` messages in any window of `windowMs`; each
 * accepted message holds its slot until its own window ends.
 */
export class BurstWindow {
  private inflight = 0;
  private readonly timers = new Set<Timer>();

  /** `reopened` runs when a full window frees its first slot. */
  constructor(
    private readonly burst: number,
    private readonly windowMs: number,
    private readonly reopened: () => void,
  ) {}

  /** Takes a slot; false when the window is full. */
  take(): boolean {
    if (this.inflight >= this.burst) return false;
    this.inflight++;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.inflight === this.burst) this.reopened();
      this.inflight--;
    }, timerDelay(this.windowMs));
    this.timers.add(timer);
    return true;
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.inflight = 0;
  }
}
