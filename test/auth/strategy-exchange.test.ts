import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request, type TestServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { fakeClock } from '../helpers/clock.js';
import { browse, CookieJar, type TestProvider } from './oidc-provider.js';
import { exchange, landing, startRecipe, untilCallback } from './strategy-recipe.js';

describe("a strategy login into Node-RED 5's editor: a one-time code exchanged at POST /auth/token", () => {
  const clock = fakeClock();
  let provider: TestProvider;
  let server: TestServer;
  let dir: string;

  before(async () => {
    dir = await tempDir();
    ({ provider, server } = await startRecipe(dir, { adminAuth: 'exchangeCodeExpiryTime: 5,' }, { clock, editorLogin: 'code' }));
  });
  after(async () => {
    await server?.stop();
    await provider?.close();
    await removeDir(dir);
  });

  async function codeFor(username: string): Promise<string> {
    const jar = new CookieJar();
    const back = await untilCallback(jar, server, provider.issuer, username);
    const code = landing(await browse(jar, back.url), server).get('code');
    assert.ok(code, 'the editor is sent a code');
    return code;
  }

  test('the code is URL-safe, no token is put in the URL, and it is exchanged once for a session', async () => {
    const jar = new CookieJar();
    const back = await untilCallback(jar, server, provider.issuer, 'alice');
    const params = landing(await browse(jar, back.url), server);
    assert.equal(params.get('access_token'), null);
    const code = params.get('code')!;
    assert.match(code, /^[A-Za-z0-9_-]{40,}$/);
    assert.equal((await request(server.at('flows'), { token: code })).status, 401, 'the code is no bearer token');
    const res = await exchange(server, code);
    assert.equal(res.status, 200);
    assert.equal(res.body.accessToken, res.body.access_token);
    assert.equal(res.body.expires_in, 604800);
    assert.equal((await request(server.at('settings'), { token: res.body.accessToken })).body.user?.username, 'alice');
    const again = await exchange(server, code);
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');
    assert.match(again.body.error_description, /Invalid exchange code/);
    assert.ok(!server.logs.some((line) => line.includes(code) || line.includes(res.body.accessToken)), 'neither the code nor the token is logged');
    assert.ok(server.logs.some((line) => line.includes('"auth.exchange.fail"')));
  });

  test('a code not exchanged within exchangeCodeExpiryTime is refused', async () => {
    const code = await codeFor('alice');
    clock.advance(6_000);
    const res = await exchange(server, code);
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
  });

  test('an unknown code, an empty one, and a session token in its place are refused; the session lives on', async () => {
    const unknown = await exchange(server, 'A'.repeat(43));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error, 'invalid_grant');
    const empty = await request(server.at('auth/token'), { method: 'POST', json: { grant_type: 'authorization_code' } });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error, 'invalid_request');
    const token = (await exchange(server, await codeFor('alice'))).body.accessToken as string;
    assert.equal((await exchange(server, token)).body.error, 'invalid_grant');
    assert.equal((await request(server.at('flows'), { token })).status, 200);
  });

  test('a code whose user the users function stopped returning is refused', async () => {
    const code = await codeFor('alice');
    await writeFile(path.join(dir, 'allowed.json'), '[]');
    try {
      assert.equal((await exchange(server, code)).body.error, 'invalid_grant');
    } finally {
      await writeFile(path.join(dir, 'allowed.json'), '["alice"]');
    }
  });
});

describe('a strategy login whose provider posts the callback (callbackMethod "POST", response_mode form_post)', () => {
  let provider: TestProvider;
  let server: TestServer;
  let dir: string;

  before(async () => {
    dir = await tempDir();
    // passport-openidconnect reads the code from the query only; strategies made for form_post
    // (passport-azure-ad's) read the posted body. This one does so around the recipe's.
    const strategy = `class extends require("passport-openidconnect").Strategy {
      authenticate(req, options) {
        if (req.method === "POST") req.query = Object.assign({}, req.query, req.body);
        return super.authenticate(req, options);
      }
    }`;
    ({ provider, server } = await startRecipe(dir, { strategy, options: 'responseMode: "form_post", callbackMethod: "post",' }));
  });
  after(async () => {
    await server?.stop();
    await provider?.close();
    await removeDir(dir);
  });

  test('the posted form completes the login; a GET of the callback is refused 405, the route takes POST only', async () => {
    const jar = new CookieJar();
    const back = await untilCallback(jar, server, provider.issuer, 'alice');
    assert.ok(back.form?.get('code'), 'the provider answered with its form_post page');
    // As a browser submits the provider's page: a cross-site form POST.
    const posted = await browse(jar, back.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: provider.issuer }, body: back.form!.toString() });
    const params = landing(posted, server);
    assert.equal(params.get('session_message'), null);
    const token = params.get('access_token') ?? (await exchange(server, params.get('code')!)).body.accessToken;
    assert.equal((await request(server.at('settings'), { token })).body.user?.username, 'alice');
    const get = await fetch(`${back.url}?${back.form!.toString()}`, { redirect: 'manual' });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
  });

  test('a posted callback without the login session is refused with a session_message, not an error page', async () => {
    const jar = new CookieJar();
    const back = await untilCallback(jar, server, provider.issuer, 'alice');
    const bare = await fetch(back.url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: provider.issuer }, body: back.form!.toString() });
    assert.equal(landing(bare, server).get('session_message'), 'AuthenticationError: Forbidden');
  });
});
