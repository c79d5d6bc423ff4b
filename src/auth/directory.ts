import { createHash } from 'node:crypto';
import type { Logger } from '../base/log.js';
import type { StrategyUser, UsersFunction } from '../settings/admin-strategy.js';
import type { UserConfig } from '../settings/settings.js';
import type { SessionRecord } from '../storage/contract.js';

/** A user as sessions and tokens follow them: who, and what they may do now. */
export interface Account {
  username: string;
  permissions: string | string[];
  /** The identity provider's subject, for a user an OIDC login let in. */
  subject?: string;
  /** For a user an OIDC login let in: the fingerprint of the provider's session they logged in with. */
  providerSession?: string;
}

/**
 * Where the users of adminAuth live. Every request with a token asks it who stands behind the
 * token now, so a removed user (or, for passwords, a changed one) is logged out at once.
 */
export interface UserDirectory {
  /** The user a session or automation token acts for, while they may still use it. */
  ownerOf(s: SessionRecord): Promise<Account | undefined>;
  /** What a new session keeps to tell later whether its user changed (a password hash's fingerprint). */
  stamp(user: Account): string | undefined;
}

/** The configured user a session or automation token acts for. */
export function ownerName(s: SessionRecord): string {
  return s.automation ? s.automation.createdBy : s.username;
}

/** A short fingerprint of a user's bcrypt hash, kept with each session (never the hash itself). */
function passwordStamp(user: UserConfig): string {
  return createHash('sha256').update(user.password).digest('hex').slice(0, 16);
}

/** `adminAuth.users` with passwords: a session lasts while its user exists with the password it was made under. */
export function credentialUsers(list: readonly UserConfig[]): UserDirectory & { ownerNow(s: SessionRecord): UserConfig | undefined; has(name: string): boolean } {
  const users = new Map(list.map((u) => [u.username, u]));
  const ownerNow = (s: SessionRecord) => {
    const user = users.get(ownerName(s));
    return user && (s.stamp === undefined || s.stamp === passwordStamp(user)) ? user : undefined;
  };
  return {
    ownerNow,
    has: (name) => users.has(name),
    ownerOf: async (s) => ownerNow(s),
    stamp: (user) => {
      const known = users.get(user.username);
      return known ? passwordStamp(known) : undefined;
    },
  };
}

/** How long a settings `users` function may take before its answer counts as a refusal. */
const USERS_FUNCTION_TIMEOUT_MS = 10_000;

/**
 * The strategy's users: a list, or Node-RED's `users(username)` function, asked again for every
 * request (as Node-RED's bearer check does), so a user it stops returning is logged out. A function
 * that throws, hangs or answers something unusable refuses the user.
 */
export function strategyUsers(users: StrategyUser[] | UsersFunction, log: Logger): UserDirectory & { find(username: string): Promise<Account | undefined> } {
  const find = typeof users === 'function' ? askFunction(users, log) : listed(users);
  return { find, ownerOf: (s) => find(ownerName(s)), stamp: () => undefined };
}

function listed(users: StrategyUser[]): (username: string) => Promise<Account | undefined> {
  const byName = new Map(users.map((u) => [u.username, u]));
  return async (username) => byName.get(username);
}

function askFunction(fn: UsersFunction, log: Logger): (username: string) => Promise<Account | undefined> {
  return async (username) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        Promise.resolve().then(() => fn(username)),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${USERS_FUNCTION_TIMEOUT_MS / 1000} s`)), USERS_FUNCTION_TIMEOUT_MS);
          timer.unref();
        }),
      ]);
      return accountOf(answer, username);
    } catch (e) {
      log.error({ err: (e as Error).message, username: username.slice(0, 256) }, 'adminAuth.users failed; the user is refused');
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The function's answer: its `username` names the sessions (as Node-RED's tokens take it); a user
 * without usable permissions may do nothing (never everything).
 */
function accountOf(answer: unknown, username: string): Account | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const { permissions, username: named } = answer as { permissions?: unknown; username?: unknown };
  const usable = typeof permissions === 'string' || (Array.isArray(permissions) && permissions.every((p) => typeof p === 'string'));
  return { username: typeof named === 'string' && named !== '' ? named : username, permissions: usable ? (permissions as string | string[]) : [] };
}
