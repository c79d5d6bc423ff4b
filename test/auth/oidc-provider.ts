import { once } from 'node:events';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { importJWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export const CLIENT_ID = 'runnel-editor';
export const CLIENT_SECRET = 'a-client-secret-for-tests';

export interface TestProvider {
  issuer: string;
  /**
   * Registers Runnel as the provider's one confidential client, once Runnel listens (on port 0) and
   * so knows its URLs; until then the provider answers 503.
   */
  register(client: ClientURLs): void;
  /** The session id (`sid`) the provider gave Runnel's client for the jar's signed-in user. */
  sessionOf(jar: CookieJar): Promise<string>;
  /**
   * A back-channel logout token signed with the provider's own key, naming what `names` gives (a
   * provider may name only the session, which oidc-provider itself never does).
   */
  logoutToken(names: { sub?: string; sid?: string }): Promise<string>;
  close(): Promise<void>;
}

export interface ClientURLs {
  /** The redirect URI: Runnel's auth/strategy/callback. */
  callbackURL: string;
  /** Where the provider posts back-channel logout tokens for the client; absent: none. */
  backchannelLogoutURL?: string;
}

export interface ProviderOptions {
  /** Each user's `groups` claim (in the ID token with the `groups` scope); absent: none. */
  groups?: Record<string, string[]>;
  /** Serve these keys at the JWKS endpoint instead of the signing key's (an ID token then fails its signature check). */
  jwks?: { keys: object[] };
  /** Told of every request the provider answered and the milliseconds it took (the SSO bench's provider time). */
  onServed?: (url: string, ms: number) => void;
}

/**
 * A real OpenID Connect provider (oidc-provider) listening on port 0 of 127.0.0.1, its issuer read
 * back from the socket. Its development login form takes any username and password: the username
 * becomes `sub` and `preferred_username`.
 */
export async function startProvider(options: ProviderOptions = {}): Promise<TestProvider> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let handle: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | undefined;
  let provider: Provider | undefined;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const began = performance.now();
    if (options.onServed) res.on('finish', () => options.onServed!(req.url ?? '', performance.now() - began));
    if (options.jwks && req.url === '/jwks') {
      res.setHeader('content-type', 'application/jwk-set+json');
      res.end(JSON.stringify(options.jwks));
    } else if (handle) {
      handle(req, res);
    } else {
      res.statusCode = 503;
      res.end('no client registered yet');
    }
  });
  return {
    issuer,
    register: (client) => {
      provider = configure(issuer, client, privateKey, options);
      handle = provider.callback();
    },
    sessionOf: async (jar) => {
      const session = await provider!.Session.find(jar.get(issuer, '_session')!);
      return session!.sidFor(CLIENT_ID);
    },
    logoutToken: async (names) =>
      new SignJWT({ ...names, events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })
        .setProtectedHeader({ alg: 'RS256', kid: KEY_ID }).setIssuer(issuer).setAudience(CLIENT_ID).setIssuedAt().setJti(randomUUID())
        .sign(await importJWK(privateKey.export({ format: 'jwk' }), 'RS256')),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const KEY_ID = 'test-key';

function configure(issuer: string, client: ClientURLs, privateKey: KeyObject, options: ProviderOptions): Provider {
  const backchannel = client.backchannelLogoutURL;
  return new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [client.callbackURL], token_endpoint_auth_method: 'client_secret_post',
      // With a session required, the ID token names the provider's session (sid), as Keycloak's does.
      ...(backchannel ? { backchannel_logout_uri: backchannel, backchannel_logout_session_required: true, post_logout_redirect_uris: [new URL('/', client.callbackURL).href] } : {}),
    }],
    ...(backchannel ? { features: { backchannelLogout: { enabled: true }, devInteractions: { enabled: true } } } : {}),
    // Its outgoing requests (the back-channel logout) refuse loopback addresses; the tests' Runnel listens on one.
    fetch: (url: string, init: RequestInit & { dispatcher?: unknown }) => {
      delete init.dispatcher;
      return fetch(url, init);
    },
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: KEY_ID, use: 'sig', alg: 'RS256' }] },
    cookies: { keys: ['provider-cookie-key-for-tests'] },
    // Profile claims in the ID token too, as Keycloak, Entra and authentik put them by default: the
    // recipe's verify of five arguments reads the profile from the ID token only.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'], groups: ['groups'] },
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({ sub, preferred_username: sub, name: `User ${sub}`, email: `${sub}@example.test`, groups: options.groups?.[sub] ?? [] }),
    }),
  });
}

/** Cookies per host and port, as a browser keeps them for these tests' two servers. */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();

  header(url: string): string | undefined {
    const jar = this.jars.get(new URL(url).host);
    return jar && jar.size > 0 ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : undefined;
  }

  get(url: string, name: string): string | undefined {
    return this.jars.get(new URL(url).host)?.get(name);
  }

  take(url: string, res: Response): void {
    const host = new URL(url).host;
    const jar = this.jars.get(host) ?? new Map<string, string>();
    this.jars.set(host, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line) || /expires=thu, 01 jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
  }

  clear(url: string): void {
    this.jars.delete(new URL(url).host);
  }
}

/** One request as a browser makes it: the jar's cookies out, Set-Cookie in, no redirects followed. */
export async function browse(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const cookie = jar.header(url);
  if (cookie) headers.set('cookie', cookie);
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.take(url, res);
  return res;
}

/**
 * Signs `username` in at the provider from its authorization URL: follows its redirects, submits
 * its login and consent forms, and returns the URL it finally sends the browser to (the callback).
 */
export async function signInAtProvider(jar: CookieJar, authorizationUrl: string, username: string): Promise<string> {
  const back = await signIn(jar, authorizationUrl, username);
  if (back.form) throw new Error('the provider answered with a form_post page, not a redirect');
  return back.url;
}

/**
 * As signInAtProvider, for either response mode: the callback URL, and with `response_mode=form_post`
 * the fields of the page's self-submitting form, which the browser would POST there.
 */
export async function signIn(jar: CookieJar, authorizationUrl: string, username: string): Promise<{ url: string; form?: URLSearchParams }> {
  let url = authorizationUrl;
  const issuerHost = new URL(authorizationUrl).host;
  for (let step = 0; step < 20; step++) {
    if (new URL(url).host !== issuerHost) return { url };
    const res = await browse(jar, url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !action) throw new Error(`unexpected provider page ${res.status}: ${html.slice(0, 300)}`);
    if (new URL(action, url).host !== issuerHost) {
      const fields = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map(([, k, v]): [string, string] => [k!, unescapeHtml(v!)]);
      return { url: action, form: new URLSearchParams(fields) };
    }
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    const form: Record<string, string> = prompt === 'login' ? { prompt, login: username, password: 'any' } : { prompt: prompt ?? 'consent' };
    const posted = await browse(jar, new URL(action, url).href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
    await posted.arrayBuffer();
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error('the provider kept redirecting');
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);
}

/**
 * Signs the jar's user out at the provider (its RP-initiated logout page, "Yes, sign me out"); the
 * provider then posts a back-channel logout token to each client the user signed in to.
 */
export async function signOutAtProvider(jar: CookieJar, issuer: string): Promise<void> {
  const page = await browse(jar, `${issuer}/session/end`);
  const html = await page.text();
  const action = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(html)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  if (page.status !== 200 || !action || !xsrf) throw new Error(`unexpected logout page ${page.status}: ${html.slice(0, 300)}`);
  const done = await browse(jar, new URL(unescapeHtml(action), issuer).href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ xsrf, logout: 'yes' }) });
  await done.arrayBuffer();
  if (done.status >= 400) throw new Error(`the provider refused the logout: ${done.status}`);
}
