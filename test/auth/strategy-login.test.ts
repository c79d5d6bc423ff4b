import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request, type TestServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { browse, CookieJar, type TestProvider } from './oidc-provider.js';
import { landing, startRecipe, untilCallback as untilCallbackAt } from './strategy-recipe.js';

/** Where the recipe's editorTheme.logout.redirect sends the browser after the editor's logout. */
const LOGOUT_PAGE = 'https://idp.example.com/logout';

describe("adminAuth.type \"strategy\" with Node-RED's passport-openidconnect recipe", () => {
  let provider: TestProvider;
  let server: TestServer;
  let dir: string;

  before(async () => {
    dir = await tempDir();
    // Node-RED 4's editor takes the token from the URL; Node-RED 5's exchange is strategy-exchange.test's.
    ({ provider, server } = await startRecipe(dir, { settings: `editorTheme: { logout: { redirect: "${LOGOUT_PAGE}" } },` }, { editorLogin: 'access_token' }));
  });
  after(async () => {
    await server?.stop();
    await provider?.close();
    await removeDir(dir);
  });

  /** Starts a login at Runnel and signs `username` in at the provider: the callback URL it returns to. */
  async function untilCallback(jar: CookieJar, username: string): Promise<string> {
    const back = await untilCallbackAt(jar, server, provider.issuer, username);
    assert.ok(back.url.startsWith(`${server.at('auth/strategy/callback')}?`), back.url);
    return back.url;
  }

  const sessionMessage = (res: Response): string | undefined => landing(res, server).get('session_message') ?? undefined;

  test('GET /auth/login offers the strategy button as Node-RED does; the login session cookie is HttpOnly', async () => {
    const res = await request(server.at('auth/login'));
    assert.deepEqual(res.body, { type: 'strategy', prompts: [{ type: 'button', label: 'Sign in with OIDC', url: 'auth/strategy', icon: 'fa-cloud' }] });
    const start = await browse(new CookieJar(), server.at('auth/strategy'));
    assert.match(start.headers.get('set-cookie')!, /^connect\.sid=[^;]+; Path=\/; HttpOnly$/);
  });

  test("a user the users function knows logs in and gets a URL-safe token for Node-RED 4's editor; the password grant is refused", async () => {
    const jar = new CookieJar();
    const token = landing(await browse(jar, await untilCallback(jar, 'alice')), server).get('access_token')!;
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
    const token = landing(await browse(jar, await untilCallback(jar, 'alice')), server).get('access_token')!;
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
    assert.equal(sessionMessage(res), 'AuthenticationError: Unauthorized');
    assert.ok(server.logs.some((line) => line.includes('auth.login.fail.oauth') && line.includes('mallory')));
  });

  test('a tampered state is refused with AuthenticationError: Forbidden', async () => {
    const jar = new CookieJar();
    const back = new URL(await untilCallback(jar, 'alice'));
    back.searchParams.set('state', `${back.searchParams.get('state')}x`);
    assert.equal(sessionMessage(await browse(jar, back.href)), 'AuthenticationError: Forbidden');
  });

  test("the editor's logout ends the session and answers editorTheme.logout.redirect, as Node-RED does", async () => {
    const jar = new CookieJar();
    const token = landing(await browse(jar, await untilCallback(jar, 'alice')), server).get('access_token')!;
    const res = await request(server.at('auth/revoke'), { method: 'POST', token, json: { token } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { redirect: LOGOUT_PAGE });
    assert.equal((await request(server.at('flows'), { token })).status, 401);
  });

  test("a callback without the login's session (another browser, a forged cookie) is refused", async () => {
    const jar = new CookieJar();
    const back = await untilCallback(jar, 'alice');
    const bare = await fetch(back, { redirect: 'manual' });
    assert.equal(sessionMessage(bare), 'AuthenticationError: Forbidden');
    const forged = await fetch(back, { redirect: 'manual', headers: { cookie: `connect.sid=${Buffer.from('{"d":{},"e":9e15}').toString('base64url')}.AAAA` } });
    assert.equal(sessionMessage(forged), 'AuthenticationError: Forbidden');
    // The real session still completes the login once, and only once.
    assert.ok(landing(await browse(jar, back), server).get('access_token'));
    assert.equal(sessionMessage(await browse(jar, back)), 'AuthenticationError: Forbidden');
  });
});

test("editorTheme.login's button replaces the strategy's, its message and image join it, as Node-RED's login", async () => {
  const dir = await tempDir();
  const theme = 'editorTheme: { login: { button: { label: "Company login", url: "auth/strategy", icon: "fa-building" }, message: "Staff only", image: "logo.png" } },';
  const { provider, server } = await startRecipe(dir, { settings: theme });
  try {
    const res = await request(server.at('auth/login'));
    assert.deepEqual(res.body, {
      type: 'strategy',
      prompts: [{ type: 'button', label: 'Company login', url: 'auth/strategy', icon: 'fa-building' }],
      image: 'theme/login/logo.png',
      loginMessage: 'Staff only',
    });
  } finally {
    await server.stop();
    await provider.close();
    await removeDir(dir);
  }
});

describe('adminAuth.type "strategy" when the provider goes down during a login', () => {
  test('the callback answers at once with a clear session_message', async () => {
    const dir = await tempDir();
    const { provider, server } = await startRecipe(dir, {}, { editorLogin: 'access_token' });
    try {
      const jar = new CookieJar();
      const back = await untilCallbackAt(jar, server, provider.issuer, 'alice');
      await provider.close();
      const began = Date.now();
      const res = await browse(jar, back.url);
      assert.ok(Date.now() - began < 5000);
      assert.equal(landing(res, server).get('session_message'), 'InternalOAuthError: Failed to obtain access token');
    } finally {
      await server.stop();
      await provider.close().catch(() => undefined);
      await removeDir(dir);
    }
  });
});
