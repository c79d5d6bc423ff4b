import { isIPv6 } from 'node:net';
import type { LoginFailures } from '../storage/contract.js';

export interface ThrottleOptions {
  /** Failures allowed per (address, username) within the window. */
  maxFailures: number;
  windowMs: number;
  /** Failures allowed per address across all usernames, as a multiple of maxFailures. */
  addressFactor?: number;
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
 * (address, username) counter. The counters live in storage: with a shared backend, failures on
 * one instance count on every other.
 */
export class LoginThrottle {
  private readonly userDelayMs: number;
  private readonly maxUserDelayMs: number;
  private readonly pairLimit: number;
  private readonly addressLimit: number;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(private readonly failures: LoginFailures, options: ThrottleOptions) {
    this.pairLimit = options.maxFailures;
    this.addressLimit = options.maxFailures * (options.addressFactor ?? 4);
    this.windowMs = options.windowMs;
    this.now = options.now ?? Date.now;
    this.userDelayMs = options.userDelayMs ?? 500;
    this.maxUserDelayMs = options.maxUserDelayMs ?? 30_000;
  }

  /**
   * Milliseconds a login for `username` waits before its password is checked: 0 until maxFailures
   * failures from all addresses together in the window, then doubling per further failure up to
   * the ceiling. Spread over many addresses, guesses at one user slow down exponentially.
   */
  async userDelay(username: string): Promise<number> {
    const key = userKey(username);
    const recent = (await this.failures.recent([key], this.now() - this.windowMs))[key]?.length ?? 0;
    if (recent < this.pairLimit) return 0;
    return Math.min(this.maxUserDelayMs, this.userDelayMs * 2 ** Math.min(30, recent - this.pairLimit));
  }

  /** The failures `address` had in the window, over all usernames. */
  async failuresOf(address: string): Promise<number> {
    const key = keysOf(address, '').address;
    return (await this.failures.recent([key], this.now() - this.windowMs))[key]?.length ?? 0;
  }

  /** Seconds until `address` may try `username` again; 0 when it may now. */
  async retryAfter(address: string, username: string): Promise<number> {
    const now = this.now();
    const keys = keysOf(address, username);
    return this.wait(await this.failures.recent([keys.pair, keys.address], now - this.windowMs), keys, now);
  }

  /**
   * Counts an attempt as failed before its password is checked, unless `address` must wait: then
   * `wait` is the seconds to wait and nothing is counted. Counting first (atomically with the check,
   * across instances too) means attempts in flight at the same time cannot outrun the limit.
   * `clean`: the address had no failure in the window before this attempt (nor one in flight).
   */
  async attempt(address: string, username: string): Promise<{ wait: number; clean: boolean }> {
    const now = this.now();
    const keys = keysOf(address, username);
    const { recorded, times } = await this.failures.countIf([keys.pair, keys.address, keys.user], now - this.windowMs, now, (t) => this.wait(t, keys, now) === 0);
    return { wait: recorded ? 0 : this.wait(times, keys, now), clean: recorded && !times[keys.address]?.length };
  }

  /** The attempt counted by attempt() succeeded: it is taken back and the pair's counter cleared. */
  async succeeded(address: string, username: string): Promise<void> {
    const keys = keysOf(address, username);
    await this.failures.forgive([keys.user, keys.address], [keys.pair]);
  }

  /** Forgets failures that have left the window. */
  prune(): Promise<void> {
    return this.failures.prune(this.now() - this.windowMs);
  }

  private wait(times: Record<string, number[]>, keys: Keys, now: number): number {
    const ms = Math.max(this.waitFor(times[keys.pair], this.pairLimit, now), this.waitFor(times[keys.address], this.addressLimit, now));
    return ms > 0 ? Math.ceil(ms / 1000) : 0;
  }

  /** Milliseconds until fewer than `limit` failures remain inside the window. */
  private waitFor(times: number[] | undefined, limit: number, now: number): number {
    if (!times || times.length < limit) return 0;
    return times[times.length - limit]! + this.windowMs - now;
  }
}

interface Keys {
  pair: string;
  address: string;
  user: string;
}

/** Usernames are attacker-chosen: bounding them bounds the memory a key can take. The prefixes keep the three kinds apart. */
function keysOf(address: string, username: string): Keys {
  const client = clientOf(address);
  return { pair: `p:${JSON.stringify([client, username.slice(0, 256)])}`, address: `a:${client}`, user: userKey(username) };
}

/**
 * Whom an address's budgets belong to: an IPv6 address's /64, which one host or household gets
 * whole, so an attacker cannot take a fresh budget (and a fresh address's unqueued guess) per address.
 */
export function clientOf(address: string): string {
  if (!isIPv6(address)) return address;
  const bare = address.split('%')[0].toLowerCase();
  const [left, right] = bare.split('::');
  const head = left ? left.split(':') : [];
  const tail = right ? right.split(':') : [];
  const groups = right === undefined ? head : [...head, ...Array<string>(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

function userKey(username: string): string {
  return `u:${username.slice(0, 256)}`;
}

/** `::ffff:127.0.0.1` is 127.0.0.1: one client must not get two budgets. */
export function normaliseAddress(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}
