import { createHash } from 'node:crypto';
import type { UserConfig } from '../../settings/settings.js';
import type { SessionRecord } from '../../storage/contract.js';
import { credentialUsers, ownerName, type Account, type UserDirectory } from '../directory.js';

const PREFIX = 'oidc:';

/**
 * What sessions of a provider's user keep to find them again: a fingerprint of the issuer's
 * subject, which a back-channel logout names (never the subject itself).
 */
export function subjectStamp(subject: string): string {
  return PREFIX + createHash('sha256').update(subject).digest('hex').slice(0, 32);
}

/**
 * What a login session keeps of the provider's session it came from (the ID token's `sid`), which a
 * back-channel logout may name alone.
 */
export function providerSessionStamp(sid: string): string {
  return createHash('sha256').update(`sid:${sid}`).digest('hex').slice(0, 32);
}

/**
 * The users of an OIDC login: those the provider vouched for hold, in their sessions, the
 * permissions their groups gave at login (and end with a back-channel logout or their expiry);
 * the local emergency accounts beside them are checked as credentials users are.
 */
export function oidcUsers(local: readonly UserConfig[]): UserDirectory & { ownerNow(s: SessionRecord): Account | undefined; has(name: string): boolean } {
  const locals = credentialUsers(local);
  const ownerNow = (s: SessionRecord): Account | undefined => (s.stamp?.startsWith(PREFIX) ? { username: ownerName(s), permissions: s.scope } : locals.ownerNow(s));
  return {
    ownerNow,
    has: locals.has,
    ownerOf: async (s) => ownerNow(s),
    stamp: (user) => (user.subject === undefined ? locals.stamp(user) : subjectStamp(user.subject)),
  };
}
