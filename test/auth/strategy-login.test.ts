import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadSettingsFile } from '../../src/settings/file.js';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { withFreePort } from '../helpers/ports.js';
import { browse, CookieJar, signInAtProvider, startProvider, type TestProvider } from './oidc-provider.js';
import { recipe } from './strategy-recipe.js';

describe("adminAuth.type \"strategy\" with Node-RED's passport-openidconnect recipe", () => {
  let provider: TestProvider;
  let server: TestServer;
  let dir: string;
  let callbackURL: string;

  before(async () => {
    dir = await tempDir();
    // As `npm install passport-openidconnect` in the user dir would.
    await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');
    await writeFile(path.join(dir, 'allowed.json'), JSON.stringify(['alice']));
    // The callback URL names the server's port, so the port is chosen first (retried if taken meanwhile).
    server = await withFreePort(async (port) => {
      callbackURL = `http://127.0.0.1:${port}/auth/strategy/callback`;
      await provider?.close();
      provider = await startProvider(callbackURL);
      await writeFile(path.join(dir, 'settings.js'), recipe(provider.issuer, callbackURL, port));
      const { raw } = await loadSettingsFile(path.join(dir, 'settings.js'));
      // Node-RED 4's editor takes the token from the URL; Node-RED 5's exchange is strategy-exchange.test's.
      return startServer(raw, dir, { editorLogin: 'access_token' });
    });
  });
  after(async () => {
    await server?.stop();
    await provider?.close();
    await removeDir(dir);
  });

  /** Starts a login at Runnel and signs `username` in at the provider: the callback URL it returns to. */
  async function untilCallback(jar: CookieJar, username: string): Promise<string> {
    const start = await browse(jar, server.at('auth/strategy'));
    assert.equal(start.status, 302);
    const toProvider = start.headers.get('location')!;
    assert.ok(toProvider.startsWith(`${provider.issuer}/auth?`), toProvider);
    const cookie = start.headers.get('set-cookie')!;
    assert.match(cookie, /^connect\.sid=[^;]+; Path=\/; HttpOnly$/);
    const back = await signInAtProvider(jar, toProvider, username);
    assert.ok(back.startsWith(`${callbackURL}?`), back);
    return back;
  }

  function sessionMessage(res: Response): string | undefined {
    const location = new URL(res.headers.get('location')!, server.url);
    assert.equal(location.pathname, '/');
    return location.searchParams.get('session_message') ?? undefined;
  }

  test('GET /auth/login offers the strategy button as Node-RED does', async () => {
    const res = await request(server.at('auth/login'));
    assert.deepEqual(res.body, { type: 'strategy', prompts: [{ type: 'button', label: 'Sign in with OIDC', url: 'auth/strategy', icon: 'fa-cloud' }] });
  });

  test("a user the users function knows logs in and gets a URL-safe token for Node-RED 4's editor; the password grant is refused", async () => {
    const jar = new CookieJar();
    const res = await browse(jar, await untilCallback(jar, 'alice'));
    assert.equal(res.status, 302);
    const location = new URL(res.headers.get('location')!, server.url);
    assert.equal(location.pathname, '/');
    const token = location.searchParams.get('access_token')!;
    assert.match(token, /^[A-Za-z0-9_-]{20,}$/);
    assert.equal(jar.header(server.url), undefined, 'the login session cookie is cleared once used');
    const flows = await request(server.at('flows'), { token });
    assert.equal(flows.status, 200);
    const settings = await request(server.at('settings'), { token });
    assert.equal(settings.body.user?.username, 'alice');
    assert.ok(!server.logs.some((line) => line.includes(token)), 'the token is never logged');
    assert.ok(server.logs.some((line) => line.includes('"auth.login"') && line.includes('alice')));
    const password = await request(server.at('auth/token'), { method: 'POST', json: { client_id: 'node-red-editor', grant_type: 'password', username: 'alice', password: 'any' } });
    assert.equal(password.status, 400);
    assert.equal(password.body.error, 'unsupported_grant_type');
  });

  test('a user the users function stops returning is logged out at their next request', async () => {
    const jar = new CookieJar();
    const res = await browse(jar, await untilCallback(jar, 'alice'));
    const token = new URL(res.headers.get('location')!, server.url).searchParams.get('access_token')!;
    assert.equal((await request(server.at('flows'), { token })).status, 200);
    await writeFile(path.join(dir, 'allowed.json'), JSON.stringify([]));
    try {
      assert.equal((await request(server.at('flows'), { token })).status, 401);
    } finally {
      await writeFile(path.join(dir, 'allowed.json'), JSON.stringify(['alice']));
    }
  });

  test('a user the users function refuses is sent back with AuthenticationError: Unauthorized', async () => {
    const jar = new CookieJar();
    const res = await browse(jar, await untilCallback(jar, 'mallory'));
    assert.equal(res.status, 302);
    assert.equal(sessionMessage(res), 'AuthenticationError: Unauthorized');
    assert.ok(server.logs.some((line) => line.includes('auth.login.fail.oauth') && line.includes('mallory')));
  });

  test('a tampered state is refused with AuthenticationError: Forbidden', async () => {
    const jar = new CookieJar();
    const back = new URL(await untilCallback(jar, 'alice'));
    back.searchParams.set('state', `${back.searchParams.get('state')}x`);
    const res = await browse(jar, back.href);
    assert.equal(res.status, 302);
    assert.equal(sessionMessage(res), 'AuthenticationError: Forbidden');
  });

  test("a callback without the login's session (another browser, a forged cookie) is refused", async () => {
    const jar = new CookieJar();
    const back = await untilCallback(jar, 'alice');
    const bare = await fetch(back, { redirect: 'manual' });
    assert.equal(bare.status, 302);
    assert.equal(sessionMessage(bare), 'AuthenticationError: Forbidden');
    const forged = await fetch(back, { redirect: 'manual', headers: { cookie: `connect.sid=${Buffer.from('{"d":{},"e":9e15}').toString('base64url')}.AAAA` } });
    assert.equal(sessionMessage(forged), 'AuthenticationError: Forbidden');
    // The real session still completes the login once, and only once.
    assert.ok(new URL((await browse(jar, back)).headers.get('location')!, server.url).searchParams.get('access_token'));
    assert.equal(sessionMessage(await browse(jar, back)), 'AuthenticationError: Forbidden');
  });
});

describe('adminAuth.type "strategy" when the provider goes down during a login', () => {
  test('the callback answers at once with a clear session_message', async () => {
    const dir = await tempDir();
    let provider: TestProvider | undefined;
    let server: TestServer | undefined;
    try {
      await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');
      await writeFile(path.join(dir, 'allowed.json'), JSON.stringify(['alice']));
      server = await withFreePort(async (port) => {
        const callbackURL = `http://127.0.0.1:${port}/auth/strategy/callback`;
        await provider?.close();
        provider = await startProvider(callbackURL);
        await writeFile(path.join(dir, 'settings.js'), recipe(provider.issuer, callbackURL, port));
        return startServer((await loadSettingsFile(path.join(dir, 'settings.js'))).raw, dir, { editorLogin: 'access_token' });
      });
      const jar = new CookieJar();
      const start = await browse(jar, server.at('auth/strategy'));
      const back = await signInAtProvider(jar, start.headers.get('location')!, 'alice');
      await provider!.close();
      const began = Date.now();
      const res = await browse(jar, back);
      assert.ok(Date.now() - began < 5000);
      assert.equal(res.status, 302);
      const message = new URL(res.headers.get('location')!, server.url).searchParams.get('session_message');
      assert.equal(message, 'InternalOAuthError: Failed to obtain access token');
    } finally {
      await server?.stop();
      await provider?.close().catch(() => undefined);
      await removeDir(dir);
    }
  });
});
