import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { OidcSettings } from '../../settings/admin-oidc.js';
import type { ProviderConfig } from './login.js';

/** Who a logout token logs out: a user at the provider (`sub`), or one of their sessions there (`sid`). */
export interface LoggedOut {
  subject?: string;
  session?: string;
}

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * Checks a back-channel logout token (OpenID Connect Back-Channel Logout 1.0 §2.6): signed with
 * one of the provider's keys, from its issuer, for this client, recent, carrying the logout event
 * and no nonce, naming a subject, a provider session (`sid`) or both. Resolves with what it names;
 * throws for anything else.
 */
export function logoutTokenChecker(settings: OidcSettings, config: ProviderConfig): (token: string) => Promise<LoggedOut> {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  return async (token) => {
    const metadata = (await config()).serverMetadata();
    if (!metadata.jwks_uri) throw new Error('the provider publishes no keys (jwks_uri)');
    keys ??= createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: 10_000 });
    const { payload } = await jwtVerify(token, keys, { issuer: metadata.issuer, audience: settings.clientId, maxTokenAge: '5m', clockTolerance: 30 });
    const events = payload.events as Record<string, unknown> | undefined;
    if (typeof events !== 'object' || events === null || typeof events[LOGOUT_EVENT] !== 'object') throw new Error('not a logout token: no back-channel logout event');
    if ('nonce' in payload) throw new Error('a logout token carries no nonce');
    const subject = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : undefined;
    const session = typeof payload.sid === 'string' && payload.sid !== '' ? payload.sid : undefined;
    if (subject === undefined && session === undefined) throw new Error('the logout token names neither a subject (sub) nor a session (sid)');
    return { ...(subject === undefined ? {} : { subject }), ...(session === undefined ? {} : { session }) };
  };
}
