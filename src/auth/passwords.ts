import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { costOf, hash, hashSync, verify } from './bcrypt.js';
import type { UserConfig } from '../settings/settings.js';

/** A bcrypt hash for the CLI's `hash-pw`. */
export function hashPassword(password: string, cost = 10): Promise<string> {
  return hash(password, cost);
}

export interface PasswordChecker {
  /** The user when the password matches, else null; unknown users cost one bcrypt run too. */
  check(username: string, password: string): Promise<UserConfig | null>;
}

/**
 * Builds the checker for the configured users. An unknown username is verified against a dummy
 * hash of the highest configured cost, so it takes as long as a wrong password and usernames
 * cannot be enumerated by timing (Node-RED answers unknown users at once).
 */
export async function createPasswordChecker(users: readonly UserConfig[]): Promise<PasswordChecker> {
  const byName = new Map(users.map((u) => [u.username, u]));
  const cost = Math.max(4, ...users.map((u) => costOf(u.password) ?? 4));
  const costs = new Set(users.map((u) => costOf(u.password) ?? 4));
  // Made at the first login rather than at start, where it held up the admin API's first answer
  // (tens of ms at cost 10); on this thread: waking the bcrypt workers for it would keep them
  // resident while idle.
  let dummy: { hash: string; floorMs: number } | undefined;
  const prepare = () => {
    if (dummy) return dummy;
    const started = performance.now();
    const made = hashSync(randomBytes(18).toString('base64'), cost);
    // With users of different costs, a cheap user's wrong password would answer sooner than an
    // unknown name (checked at the highest cost): failures are held to the highest cost's time.
    return (dummy = { hash: made, floorMs: costs.size > 1 ? performance.now() - started : 0 });
  };
  return {
    async check(username, password) {
      const { hash: unknownUser, floorMs } = prepare();
      const begun = performance.now();
      const user = byName.get(username);
      const ok = await verifySafely(password, user?.password ?? unknownUser);
      if (ok && user) return user;
      const left = floorMs - (performance.now() - begun);
      if (left > 1) await delay(left);
      return null;
    },
  };
}

async function verifySafely(password: string, stored: string): Promise<boolean> {
  try {
    return await verify(password, stored);
  } catch {
    // A failed computation is a failed login, not a server error.
    return false;
  }
}
