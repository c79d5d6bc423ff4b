import type { LoginFailures } from './contract.js';

/**
 * Login failures in this process's memory (a single instance needs no more; they do not survive
 * a restart). Keys are attacker-chosen, so at most `maxKeys` are kept: beyond it the keys whose
 * last failure is oldest are forgotten first.
 */
export class MemoryLoginFailures implements LoginFailures {
  /** In least-recently-failed order: re-inserting a key on each failure keeps it so. */
  private readonly times = new Map<string, number[]>();

  constructor(private readonly maxKeys = 50_000) {}

  async recent(keys: string[], since: number): Promise<Record<string, number[]>> {
    return this.read(keys, since);
  }

  async countIf(keys: string[], since: number, now: number, admit: (times: Record<string, number[]>) => boolean) {
    const times = this.read(keys, since);
    if (!admit(times)) return { recorded: false, times };
    for (const key of new Set(keys)) {
      this.times.delete(key);
      this.times.set(key, [...(times[key] ?? []), now]);
    }
    if (this.times.size > this.maxKeys) this.evict(since);
    return { recorded: true, times };
  }

  async forgive(pop: string[], clear: string[]): Promise<void> {
    for (const key of pop) this.times.get(key)?.pop();
    for (const key of clear) this.times.delete(key);
  }

  async prune(before: number): Promise<void> {
    for (const [key, times] of this.times) {
      const kept = times.filter((t) => t > before);
      if (kept.length === 0) this.times.delete(key);
      else if (kept.length < times.length) this.times.set(key, kept);
    }
  }

  /** How many keys are kept (bounded by maxKeys). */
  get size(): number {
    return this.times.size;
  }

  private read(keys: string[], since: number): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    for (const key of keys) {
      const recent = this.times.get(key)?.filter((t) => t > since);
      if (recent?.length) out[key] = recent;
    }
    return out;
  }

  private evict(since: number): void {
    void this.prune(since);
    let excess = this.times.size - this.maxKeys;
    for (const key of this.times.keys()) {
      if (excess-- <= 0) break;
      this.times.delete(key);
    }
  }
}
