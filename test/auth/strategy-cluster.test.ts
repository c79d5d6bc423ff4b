import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { withFreePort } from '../helpers/ports.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { CookieJar, startProvider, type TestProvider } from './oidc-provider.js';
import { landing, recipeDir, untilCallback } from './strategy-recipe.js';

/**
 * Two instances sharing PostgreSQL behind a balancer without sticky sessions: each step of a
 * strategy login may reach either instance.
 */
describe('a strategy login on a cluster without sticky sessions', () => {
  let pg: TestPostgres;
  let provider: TestProvider;
  let a: TestServer;
  let b: TestServer;
  let root: string;

  before(async () => {
    pg = await startPostgres();
    root = await tempDir();
    const settings = `storage: { type: "postgres", url: "${pg.url}", schema: "strategy_cluster" }, credentialSecret: "cluster-secret",`;
    let callbackURL = '';
    a = await withFreePort(async (port) => {
      callbackURL = `http://127.0.0.1:${port}/auth/strategy/callback`;
      await provider?.close();
      provider = await startProvider(callbackURL);
      return startServer(await recipeDir(path.join(root, 'a'), provider.issuer, callbackURL, port, { settings }), path.join(root, 'a'), { editorLogin: 'code' });
    });
    b = await startServer(await recipeDir(path.join(root, 'b'), provider.issuer, callbackURL, 0, { settings }), path.join(root, 'b'), { editorLogin: 'code' });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await provider?.close();
    await pg?.dispose();
    await removeDir(root);
  });

  test('started on one instance, the callback completes on the other, and either exchanges the code once', async () => {
    const jar = new CookieJar();
    const back = await untilCallback(jar, a, provider.issuer, 'alice');
    // The balancer sends the callback, with the browser's cookie, to the other instance.
    const onB = new URL(back.url);
    const res = await fetch(b.at(`${onB.pathname}${onB.search}`), { redirect: 'manual', headers: { cookie: jar.header(a.url)! } });
    const code = landing(res, b).get('code');
    assert.ok(code, `the login completed on the other instance: ${res.headers.get('location')}`);
    const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ code }).toString() };
    const exchanged = await request(a.at('auth/token'), form);
    assert.equal(exchanged.status, 200);
    assert.equal((await request(b.at('settings'), { token: exchanged.body.accessToken })).body.user?.username, 'alice');
    const reused = await request(b.at('auth/token'), form);
    assert.equal(reused.status, 400);
    assert.equal(reused.body.error, 'invalid_grant');
  });
});
