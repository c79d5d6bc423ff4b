export interface ThrottleOptions {
  /** Failures allowed per (address, username) within the window. */
  maxFailures: number;
  windowMs: number;
  /** Failures allowed per address across all usernames, as a multiple of maxFailures. */
  addressFactor?: number;
  /** Keys tracked at most; beyond it the stalest are forgotten. */
  maxKeys?: number;
  /** First delay (ms) once a username passed maxFailures from all addresses together; doubles per failure. */
  userDelayMs?: number;
  /** The longest such delay (ms). */
  maxUserDelayMs?: number;
  now?: () => number;
}

/**
 * Login throttling by client address and by (address, username). Node-RED throttles by
 * username alone, which lets anyone lock a known user out and lets spraying many usernames
 * through; here another address is never locked out, and one address spraying usernames is.
 * Only failures count (a refused attempt does not extend the lockout), and a success clears its
 * (address, username) counter. Each key keeps only the timestamps that can still matter.
 */
/** Timestamps kept per key beyond its limit. */
const SPARE = 32;

export class LoginThrottle {
  private readonly pairs = new Map<string, number[]>();
  private readonly addresses = new Map<string, number[]>();
  /** Failures per username from every address: guessing is slowed, never refused (the real user still gets in). */
  private readonly users = new Map<string, number[]>();
  private readonly userDelayMs: number;
  private readonly maxUserDelayMs: number;
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
    this.userDelayMs = options.userDelayMs ?? 500;
    this.maxUserDelayMs = options.maxUserDelayMs ?? 30_000;
  }

  /**
   * Milliseconds a login for `username` waits before its password is checked: 0 until maxFailures
   * failures from all addresses together in the window, then doubling per further failure up to
   * the ceiling. Spread over many addresses, guesses at one user slow down exponentially.
   */
  userDelay(username: string): number {
    const times = this.users.get(userKey(username));
    if (!times) return 0;
    const cutoff = this.now() - this.windowMs;
    const recent = times.filter((t) => t > cutoff).length;
    if (recent < this.pairLimit) return 0;
    return Math.min(this.maxUserDelayMs, this.userDelayMs * 2 ** Math.min(30, recent - this.pairLimit));
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

  /**
   * Counts an attempt as failed before its password is checked, so attempts in flight at the same
   * time all count (a burst got one extra guess when failures were counted afterwards).
   */
  failed(address: string, username: string): void {
    const now = this.now();
    // Kept beyond the limit (bounded) so a success taking its own count back leaves the earlier ones.
    this.record(this.pairs, pairKey(address, username), this.pairLimit + SPARE, now);
    this.record(this.addresses, address, this.addressLimit + SPARE, now);
    this.record(this.users, userKey(username), this.pairLimit + SPARE, now);
  }

  /** The attempt counted by failed() succeeded: it is taken back and the pair's counter cleared. */
  succeeded(address: string, username: string): void {
    this.pairs.delete(pairKey(address, username));
    this.users.get(userKey(username))?.pop();
    this.addresses.get(address)?.pop();
  }

  /** Forgets keys whose failures have all left the window. */
  prune(): void {
    const cutoff = this.now() - this.windowMs;
    for (const map of [this.pairs, this.addresses, this.users]) {
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

function userKey(username: string): string {
  return username.slice(0, 256);
}

/** `::ffff:127.0.0.1` is 127.0.0.1: one client must not get two budgets. */
export function normaliseAddress(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}
