export interface ThrottleOptions {
  /** Failures allowed per (address, username) within the window. */
  maxFailures: number;
  windowMs: number;
  /** Failures allowed per address across all usernames, as a multiple of maxFailures. */
  addressFactor?: number;
  /** Keys tracked at most; beyond it the stalest are forgotten. */
  maxKeys?: number;
  now?: () => number;
}

/**
 * Login throttling by client address and by (address, username). Node-RED throttles by
 * username alone, which lets anyone lock a known user out and lets spraying many usernames
 * through; here another address is never locked out, and one address spraying usernames is.
 * Only failures count (a refused attempt does not extend the lockout), and a success clears its
 * (address, username) counter. Each key keeps only the timestamps that can still matter.
 */
export class LoginThrottle {
  private readonly pairs = new Map<string, number[]>();
  private readonly addresses = new Map<string, number[]>();
  private readonly pairLimit: number;
  private readonly addressLimit: number;
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(options: ThrottleOptions) {
    this.pairLimit = options.maxFailures;
    this.addressLimit = options.maxFailures * (options.addressFactor ?? 4);
    this.windowMs = options.windowMs;
    this.maxKeys = options.maxKeys ?? 50_000;
    this.now = options.now ?? Date.now;
  }

  /** Seconds until `address` may try `username` again; 0 when it may now. */
  retryAfter(address: string, username: string): number {
    const now = this.now();
    const wait = Math.max(
      this.waitFor(this.pairs.get(pairKey(address, username)), this.pairLimit, now),
      this.waitFor(this.addresses.get(address), this.addressLimit, now),
    );
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  failed(address: string, username: string): void {
    const now = this.now();
    this.record(this.pairs, pairKey(address, username), this.pairLimit, now);
    this.record(this.addresses, address, this.addressLimit, now);
  }

  succeeded(address: string, username: string): void {
    this.pairs.delete(pairKey(address, username));
  }

  /** Forgets keys whose failures have all left the window. */
  prune(): void {
    const cutoff = this.now() - this.windowMs;
    for (const map of [this.pairs, this.addresses]) {
      for (const [k, times] of map) if (times[times.length - 1] <= cutoff) map.delete(k);
    }
  }

  /** Milliseconds until fewer than `limit` failures remain inside the window. */
  private waitFor(times: number[] | undefined, limit: number, now: number): number {
    if (!times || times.length < limit) return 0;
    return times[times.length - limit] + this.windowMs - now;
  }

  private record(map: Map<string, number[]>, key: string, limit: number, now: number): void {
    const times = map.get(key) ?? [];
    // Re-inserting keeps the map in least-recently-failed order, so eviction drops the stalest.
    map.delete(key);
    times.push(now);
    if (times.length > limit) times.splice(0, times.length - limit);
    map.set(key, times);
    if (map.size > this.maxKeys) {
      this.prune();
      const excess = map.size - this.maxKeys;
      let i = 0;
      for (const k of map.keys()) {
        if (i++ >= excess) break;
        map.delete(k);
      }
    }
  }
}

/** Usernames are attacker-chosen: bounding them bounds the memory a key can take. */
function pairKey(address: string, username: string): string {
  return JSON.stringify([address, username.slice(0, 256)]);
}
