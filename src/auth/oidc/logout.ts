import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { OidcSettings } from '../../settings/admin-oidc.js';
import type { ProviderConfig } from './login.js';

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * Checks a back-channel logout token (OpenID Connect Back-Channel Logout 1.0 §2.6): signed with
 * one of the provider's keys, from its issuer, for this client, recent, carrying the logout event
 * and no nonce. Resolves with the subject whose sessions end; throws for anything else.
 */
export function logoutTokenChecker(settings: OidcSettings, config: ProviderConfig): (token: string) => Promise<string> {
  let keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  return async (token) => {
    const metadata = (await config()).serverMetadata();
    if (!metadata.jwks_uri) throw new Error('the provider publishes no keys (jwks_uri)');
    keys ??= createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: 10_000 });
    const { payload } = await jwtVerify(token, keys, { issuer: metadata.issuer, audience: settings.clientId, maxTokenAge: '5m', clockTolerance: 30 });
    const events = payload.events as Record<string, unknown> | undefined;
    if (typeof events !== 'object' || events === null || typeof events[LOGOUT_EVENT] !== 'object') throw new Error('not a logout token: no back-channel logout event');
    if ('nonce' in payload) throw new Error('a logout token carries no nonce');
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new Error('the logout token names no subject (sid alone is not supported)');
    return payload.sub;
  };
}
