import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, importJWK } from 'jose';
import { ADMIN_PASSWORD, adminAuth, eventually, login, request, type TestServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { skewedClock } from '../helpers/cluster.js';
import { killRunnels, spawnRunnel } from '../helpers/process.js';
import { browse, CLIENT_ID, CLIENT_SECRET, CookieJar, signIn, signOutAtProvider, startProvider, type ProviderOptions, type TestProvider } from './oidc-provider.js';
import { exchange, landing, startOidc as startWith } from './strategy-recipe.js';

const GROUPS = { alice: ['runnel-admins', 'staff'], rita: ['runnel-viewers'], mallory: ['staff'] };

/** A provider with groups and back-channel logout, and Runnel's built-in OIDC login against it, with a local emergency account. */
function startOidc(options: Omit<ProviderOptions, 'groups'> = {}): Promise<{ provider: TestProvider; server: TestServer }> {
  return startWith({
    groups: GROUPS, ...options,
    adminAuth: { groupsClaim: 'groups', permissions: { 'runnel-admins': '*', 'runnel-viewers': 'read' }, users: adminAuth().users.slice(0, 1) },
    options: { editorLogin: 'code' },
  });
}

/** Starts a login at Runnel: the authorization URL it sends the browser to. */
async function begin(jar: CookieJar, server: TestServer, issuer: string): Promise<URL> {
  const start = await browse(jar, server.at('auth/strategy'));
  assert.equal(start.status, 302);
  const url = new URL(start.headers.get('location')!);
  assert.equal(url.origin, issuer);
  return url;
}

/** The whole browser flow: the editor's session token for `username`, or the session_message it was refused with. */
async function signInAs(server: TestServer, provider: TestProvider, username: string, jar = new CookieJar()): Promise<{ token?: string; message?: string }> {
  const back = await signIn(jar, (await begin(jar, server, provider.issuer)).href, username);
  const params = landing(await browse(jar, back.url), server);
  const code = params.get('code');
  if (!code) return { message: params.get('session_message') ?? undefined };
  const exchanged = await exchange(server, code);
  assert.equal(exchanged.status, 200);
  return { token: exchanged.body.accessToken };
}

describe('adminAuth.type "oidc" against a real OpenID Connect provider', () => {
  let provider: TestProvider;
  let server: TestServer;

  before(async () => {
    ({ provider, server } = await startOidc());
  });
  after(async () => {
    await server?.dispose();
    await provider?.close();
  });

  test('the editor is offered the provider\'s button; the login sends PKCE S256, state and nonce', async () => {
    const scheme = await request(server.at('auth/login'));
    assert.deepEqual(scheme.body, { type: 'strategy', prompts: [{ type: 'button', label: `Sign in with ${new URL(provider.issuer).host}`, url: 'auth/strategy' }] });
    const url = await begin(new CookieJar(), server, provider.issuer);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge')!, /^[\w-]{43}$/);
    assert.ok(url.searchParams.get('state') && url.searchParams.get('nonce'));
    assert.equal(url.searchParams.get('scope'), 'openid profile groups');
  });

  test('a user of a mapped group gets its permissions, and may make automation tokens within them', async () => {
    const { token, message } = await signInAs(server, provider, 'alice');
    assert.ok(token, message);
    assert.equal((await request(server.at('settings'), { token })).body.user?.username, 'alice');
    const made = await request(server.at('auth/tokens'), { method: 'POST', token, json: { name: 'ci', scope: 'flows.read' } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal((await request(server.at('flows'), { token: made.body.token })).status, 200);

    const reader = (await signInAs(server, provider, 'rita')).token;
    assert.equal((await request(server.at('flows'), { token: reader })).status, 200);
    const write = await request(server.at('flows'), { method: 'POST', token: reader, json: [] });
    assert.ok(write.status === 401 || write.status === 403, String(write.status));
  });

  test('a user in no mapped group gets no access at all', async () => {
    const { token, message } = await signInAs(server, provider, 'mallory');
    assert.equal(token, undefined);
    assert.equal(message, 'AuthenticationError: Unauthorized');
    assert.ok(server.logs.some((line) => line.includes('no_mapped_group') && line.includes('mallory')));
  });

  test('a tampered state, a callback without the login session and a wrong nonce are refused', async () => {
    const jar = new CookieJar();
    const back = new URL((await signIn(jar, (await begin(jar, server, provider.issuer)).href, 'alice')).url);
    back.searchParams.set('state', `${back.searchParams.get('state')}x`);
    const tampered = landing(await browse(jar, back.href), server);
    assert.equal(tampered.get('code'), null);
    assert.match(tampered.get('session_message')!, /state/i);

    const other = new CookieJar();
    const again = await signIn(other, (await begin(other, server, provider.issuer)).href, 'alice');
    assert.equal(landing(await fetch(again.url, { redirect: 'manual' }), server).get('session_message'), 'AuthenticationError: Forbidden');

    // The login's own state and PKCE, but the provider is asked for another nonce than the login keeps.
    const third = new CookieJar();
    const url = await begin(third, server, provider.issuer);
    url.searchParams.set('nonce', 'a-nonce-the-login-did-not-make');
    const wrongNonce = landing(await browse(third, (await signIn(third, url.href, 'alice')).url), server);
    assert.equal(wrongNonce.get('code'), null);
    assert.match(wrongNonce.get('session_message')!, /nonce/i);
  });

  test('a replayed callback is refused, also into another pending login; a code is exchanged once; nothing to resume a login with is logged', async () => {
    const jar = new CookieJar();
    const back = (await signIn(jar, (await begin(jar, server, provider.issuer)).href, 'alice')).url;
    const code = landing(await browse(jar, back), server).get('code')!;
    const first = await exchange(server, code);
    assert.equal(first.status, 200);
    const reused = await exchange(server, code);
    assert.equal(reused.status, 400);
    assert.equal(reused.body.error, 'invalid_grant');

    // The login's cookie went with its callback: the same callback again has no login to answer.
    assert.equal(landing(await browse(jar, back), server).get('session_message'), 'AuthenticationError: Forbidden');
    // Replayed into a login the browser began since: that login's state is another.
    await begin(jar, server, provider.issuer);
    const replayed = landing(await browse(jar, back), server);
    assert.equal(replayed.get('code'), null);
    assert.match(replayed.get('session_message')!, /state/i);

    const secrets = [code, first.body.accessToken as string, new URL(back).searchParams.get('code')!, new URL(back).searchParams.get('state')!];
    for (const secret of secrets) assert.ok(!server.logs.some((line) => line.includes(secret)), 'a code, token or state in the log');
  });

  test('a user who cancels at the provider lands in the editor with the provider\'s reason', async () => {
    const jar = new CookieJar();
    const state = (await begin(jar, server, provider.issuer)).searchParams.get('state')!;
    // What the provider's Cancel sends the browser back with (RFC 6749 §4.1.2.1, RFC 9207's iss).
    const refusal = new URLSearchParams({ error: 'access_denied', error_description: 'End-User aborted interaction', state, iss: provider.issuer });
    const params = landing(await browse(jar, server.at(`auth/strategy/callback?${refusal}`)), server);
    assert.equal(params.get('code'), null);
    assert.equal(params.get('session_message'), 'AuthorizationError: access_denied (End-User aborted interaction)');
  });

  test('a back-channel logout at the provider ends the user\'s sessions and tokens', async () => {
    const jar = new CookieJar();
    const { token } = await signInAs(server, provider, 'alice', jar);
    const automation = (await request(server.at('auth/tokens'), { method: 'POST', token, json: { name: 'deploys', scope: 'flows.read' } })).body.token as string;
    const rita = (await signInAs(server, provider, 'rita')).token;
    await signOutAtProvider(jar, provider.issuer);
    await eventually(async () => (await request(server.at('flows'), { token })).status === 401, 5000);
    assert.equal((await request(server.at('flows'), { token: automation })).status, 401);
    assert.equal((await request(server.at('flows'), { token: rita })).status, 200, 'another user stays signed in');
    assert.ok(server.logs.some((line) => line.includes('"auth.logout.backchannel"') && line.includes('alice')));
  });

  test('a logout token naming only a provider session (sid) ends exactly the sessions made from it; an unknown sid changes nothing', async () => {
    const laptop = new CookieJar();
    const { token: onLaptop } = await signInAs(server, provider, 'alice', laptop);
    const automation = (await request(server.at('auth/tokens'), { method: 'POST', token: onLaptop, json: { name: 'ci-sid', scope: 'flows.read' } })).body.token as string;
    const { token: onDesktop } = await signInAs(server, provider, 'alice');
    const post = async (names: { sub?: string; sid?: string }) =>
      request(server.at('auth/backchannel-logout'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: await provider.logoutToken(names) }).toString() });

    const unknown = await post({ sid: 'a-session-the-provider-never-had' });
    assert.equal(unknown.status, 200, JSON.stringify(unknown.body));
    for (const token of [onLaptop, onDesktop, automation]) assert.equal((await request(server.at('flows'), { token })).status, 200);

    assert.equal((await post({ sid: await provider.sessionOf(laptop) })).status, 200);
    assert.equal((await request(server.at('flows'), { token: onLaptop })).status, 401, "the laptop's provider session ended");
    assert.equal((await request(server.at('flows'), { token: onDesktop })).status, 200, "the desktop's provider session is another");
    assert.equal((await request(server.at('flows'), { token: automation })).status, 200, 'an automation token outlives the login session that made it');
  });

  test("the editor's logout ends the session and sends the browser to the provider's logout page", async () => {
    const { token } = await signInAs(server, provider, 'alice');
    const res = await request(server.at('auth/revoke'), { method: 'POST', token, json: { token } });
    assert.equal(res.status, 200);
    const redirect = new URL(res.body.redirect);
    assert.equal(`${redirect.origin}${redirect.pathname}`, `${provider.issuer}/session/end`);
    assert.equal(redirect.searchParams.get('client_id'), CLIENT_ID);
    assert.equal((await request(server.at('flows'), { token })).status, 401);
    assert.match(await (await fetch(redirect)).text(), /session\/end\/confirm/, "the provider's logout step");
  });

  test('a logout token not signed by the provider, or none at all, is refused in OAuth shape and ends nothing', async () => {
    const { token } = await signInAs(server, provider, 'alice');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forged = await new SignJWT({ sub: 'alice', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } })
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).setIssuer(provider.issuer).setAudience(CLIENT_ID).setIssuedAt().setJti('x')
      .sign(await importJWK(privateKey.export({ format: 'jwk' }), 'RS256'));
    const res = await request(server.at('auth/backchannel-logout'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: forged }).toString() });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_request');
    // No logout token, an oversized one, a body that does not parse: the same OAuth-shaped refusal.
    const form = (body: string) => request(server.at('auth/backchannel-logout'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    for (const bad of [await form(''), await form(`logout_token=${'a'.repeat(16385)}`), await request(server.at('auth/backchannel-logout'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' })]) {
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, 'invalid_request');
      assert.equal(typeof bad.body.error_description, 'string');
    }
    assert.equal((await request(server.at('flows'), { token })).status, 200);
  });

  test('a local emergency account logs in with its password beside the provider', async () => {
    const token = await login(server, 'admin', ADMIN_PASSWORD);
    assert.equal((await request(server.at('flows'), { token })).status, 200);
  });
});

describe('adminAuth.type "oidc" when the provider misbehaves', () => {
  test('an ID token whose signature does not match the provider\'s published keys is refused', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'test-key', use: 'sig', alg: 'RS256' }] };
    const { provider, server } = await startOidc({ jwks });
    try {
      const { token, message } = await signInAs(server, provider, 'alice');
      assert.equal(token, undefined);
      assert.match(message!, /signature/i);
    } finally {
      await server.dispose();
      await provider.close();
    }
  });

  test('an ID token past its expiry (beyond the 30 s tolerance) is refused', async () => {
    const provider = await startProvider({ groups: GROUPS });
    const dir = await tempDir();
    try {
      // Runnel's clock two hours ahead of the provider's: the provider's one-hour ID tokens arrive expired.
      const runnel = await spawnRunnel(dir, {
        adminAuth: { type: 'oidc', issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scope: 'openid profile groups', permissions: { 'runnel-admins': '*' } },
      }, [], skewedClock(2 * 3600_000));
      const at = (p: string) => new URL(p, runnel.url).href;
      provider.register({ callbackURL: at('auth/strategy/callback') });
      const jar = new CookieJar();
      const start = await browse(jar, at('auth/strategy'));
      const params = landing(await browse(jar, (await signIn(jar, start.headers.get('location')!, 'alice')).url), runnel);
      assert.equal(params.get('code'), null);
      assert.match(params.get('session_message')!, /"exp".*expiration/);
    } finally {
      killRunnels();
      await provider.close();
      await removeDir(dir);
    }
  });

  test('the provider down during the login: a clear message at once, not a hang', async () => {
    const { provider, server } = await startOidc();
    try {
      const jar = new CookieJar();
      const back = await signIn(jar, (await begin(jar, server, provider.issuer)).href, 'alice');
      await provider.close();
      const began = Date.now();
      const params = landing(await browse(jar, back.url), server);
      assert.ok(Date.now() - began < 5000);
      assert.equal(params.get('session_message'), 'OIDCError: The identity provider could not be reached');
    } finally {
      await server.dispose();
      await provider.close().catch(() => undefined);
    }
  });
});
