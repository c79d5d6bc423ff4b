import * as client from 'openid-client';
import type { Logger } from '../../base/log.js';
import type { OidcSettings } from '../../settings/admin-oidc.js';
import type { CookieOptions } from '../../settings/admin-strategy.js';
import type { Account } from '../directory.js';
import type { StrategyLogin } from '../strategy/login.js';
import { CookieSessions } from '../strategy/session.js';
import { permissionsOf } from './claims.js';
import { providerSessionStamp } from './users.js';

/** Seconds a provider may take to answer discovery, the token request or its keys. */
const TIMEOUT_SECONDS = 10;
/** Seconds of clock difference with the provider tolerated in the ID token's times. */
const CLOCK_TOLERANCE_SECONDS = 30;
/** Where the pending login waits in the signed session cookie. */
const PENDING = 'oidc';

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
}

export interface OidcLoginDeps {
  settings: OidcSettings;
  cookie: CookieOptions;
  cookieKey: Buffer;
  adminRoot: string;
  log: Logger;
  handOver(user: Account, who: Record<string, unknown>): Promise<{ param: string; value: string }>;
}

/** The provider's configuration, from discovery; a failed discovery is tried again at the next login. */
export type ProviderConfig = () => Promise<client.Configuration>;

export function providerConfig(settings: OidcSettings): ProviderConfig {
  let found: Promise<client.Configuration> | undefined;
  const discover = async () => {
    const metadata = { [client.clockTolerance]: CLOCK_TOLERANCE_SECONDS, ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}) };
    // Plain http is only accepted for an issuer on this machine (the settings refuse it otherwise).
    const insecure = new URL(settings.issuer).protocol === 'http:';
    const config = await client.discovery(new URL(settings.issuer), settings.clientId, metadata, settings.clientSecret ? undefined : client.None(), {
      timeout: TIMEOUT_SECONDS,
      execute: [...(insecure ? [client.allowInsecureRequests] : []), client.enableNonRepudiationChecks],
    });
    return config;
  };
  return () => {
    found ??= discover().catch((e: unknown) => {
      found = undefined;
      throw e;
    });
    return found;
  };
}

/**
 * Where the editor sends the browser after its logout, to end the provider's session too
 * (RP-initiated logout); undefined when the provider offers none or cannot be reached.
 */
export async function endSessionUrl(config: ProviderConfig, clientId: string): Promise<string | undefined> {
  try {
    return client.buildEndSessionUrl(await config(), { client_id: clientId }).href;
  } catch {
    return undefined;
  }
}

/**
 * Runnel's OpenID Connect login, on the strategy login's routes so the unchanged editor shows its
 * button: the authorization code flow with PKCE (S256), `state` and `nonce` kept in the signed
 * session cookie, the ID token's signature checked against the provider's keys (and its issuer,
 * audience, expiry and nonce), the groups claim mapped to permissions. A user no group maps gets
 * nothing: the login is refused.
 */
export function createOidcLogin(deps: OidcLoginDeps, config: ProviderConfig): StrategyLogin {
  const { settings, log } = deps;
  const sessions = new CookieSessions(deps.cookie, deps.cookieKey);
  const editor = deps.adminRoot === '/' ? '/' : `${deps.adminRoot}/`;
  const callbackPath = `${deps.adminRoot === '/' ? '' : deps.adminRoot}/auth/strategy/callback`;
  const failure = (message: string) => ({ status: 302, location: `${editor}?session_message=${encodeURIComponent(message)}` });

  const start = async (origin: string) => {
    const redirectUri = settings.callbackURL ?? `${origin}${callbackPath}`;
    const pending: Pending = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), redirectUri };
    const url = client.buildAuthorizationUrl(await config(), {
      redirect_uri: redirectUri,
      scope: settings.scope,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return { status: 302, location: url.href, setCookie: sessions.write({ [PENDING]: pending }, false) };
  };

  const callback = async (url: string, pending: Pending | undefined, who: Record<string, unknown>) => {
    if (!pending) {
      log.audit({ event: 'auth.login.fail.oauth', reason: 'no_login_session', ...who }, 'login refused: the callback came without the login it answers');
      return failure('AuthenticationError: Forbidden');
    }
    const back = new URL(pending.redirectUri);
    back.search = new URL(url, back).search;
    const tokens = await client.authorizationCodeGrant(await config(), back, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    const named = claims[settings.usernameClaim];
    const username = typeof named === 'string' && named !== '' ? named : claims.sub;
    const permissions = permissionsOf(claims[settings.groupsClaim], settings.permissions);
    if (permissions.length === 0) {
      log.audit({ event: 'auth.login.fail.oauth', reason: 'no_mapped_group', username: username.slice(0, 256), ...who }, 'login refused: none of the user\'s groups is in adminAuth.permissions');
      return failure('AuthenticationError: Unauthorized');
    }
    const providerSession = typeof claims.sid === 'string' && claims.sid !== '' ? providerSessionStamp(claims.sid) : undefined;
    const { param, value } = await deps.handOver({ username, permissions, subject: claims.sub, ...(providerSession ? { providerSession } : {}) }, { ...who, issuer: settings.issuer });
    return { status: 302, location: `${editor}?${param}=${value}` };
  };

  return {
    label: settings.label,
    icon: settings.icon,
    autoLogin: settings.autoLogin,
    callbackMethod: 'GET',
    async handle(req) {
      const who = { ip: req.ip, reqId: req.reqId };
      const { data, had } = sessions.read(req.raw.headers.cookie);
      const isCallback = new URL(req.url, 'http://runnel').pathname.endsWith('/auth/strategy/callback');
      try {
        if (!isCallback) return await start(req.origin);
        // The pending login is used once, whatever the outcome: the cookie goes.
        const answer = await callback(req.url, data[PENDING] as Pending | undefined, who);
        const cleared = sessions.write({}, had);
        return cleared === undefined ? answer : { ...answer, setCookie: cleared };
      } catch (e) {
        const message = describe(e);
        log.audit({ event: 'auth.login.fail.oauth', error: message, ...who }, 'login failed');
        const cleared = isCallback ? sessions.write({}, had) : undefined;
        return { ...failure(message), ...(cleared === undefined ? {} : { setCookie: cleared }) };
      }
    },
  };
}

/**
 * What went wrong, for the editor's message and the audit log: the library's error code and
 * message (which name the check that failed), never a token or the provider's raw answer.
 */
function describe(e: unknown): string {
  const err = e as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown; error?: unknown; error_description?: unknown };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError' || (err?.cause as { code?: unknown })?.code === 'ECONNREFUSED' || err?.message === 'fetch failed') {
    return 'OIDCError: The identity provider could not be reached';
  }
  // The provider refused (the user cancelled, a grant it no longer knows): the library's message
  // only says that it did; the OAuth error code and description say why.
  if (typeof err?.error === 'string') {
    const detail = typeof err.error_description === 'string' ? ` (${err.error_description})` : '';
    return `AuthorizationError: ${err.error}${detail}`.slice(0, 200);
  }
  const code = typeof err?.code === 'string' ? err.code : 'OIDCError';
  const message = typeof err?.message === 'string' ? err.message : String(e);
  // openid-client's own message is generic ("invalid response encountered"); its cause names the check.
  const cause = (err?.cause as { message?: unknown } | undefined)?.message;
  return `${code}: ${message}${typeof cause === 'string' ? ` (${cause})` : ''}`.slice(0, 200);
}
