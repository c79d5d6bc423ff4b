import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { browse, CLIENT_ID, CLIENT_SECRET, CookieJar, signIn, signOutAtProvider, startProvider, type TestProvider } from './oidc-provider.js';
import { exchange, landing, recipeDir, untilCallback } from './strategy-recipe.js';

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
    provider = await startProvider();
    a = await startServer(await recipeDir(path.join(root, 'a'), provider.issuer, { settings }), path.join(root, 'a'), { editorLogin: 'code' });
    // The client's one registered redirect URI is A's, whichever instance began the login.
    const callbackURL = a.at('auth/strategy/callback');
    b = await startServer(await recipeDir(path.join(root, 'b'), provider.issuer, { settings, callbackURL }), path.join(root, 'b'), { editorLogin: 'code' });
    provider.register({ callbackURL });
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
    const exchanged = await exchange(a, code);
    assert.equal(exchanged.status, 200);
    assert.equal((await request(b.at('settings'), { token: exchanged.body.accessToken })).body.user?.username, 'alice');
    const reused = await exchange(b, code);
    assert.equal(reused.status, 400);
    assert.equal(reused.body.error, 'invalid_grant');
  });
});

/**
 * The built-in OIDC login on two instances sharing PostgreSQL: the provider calls back to one and
 * posts its back-channel logout to the other.
 */
describe('adminAuth.type "oidc" on a cluster', () => {
  let pg: TestPostgres;
  let provider: TestProvider;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    pg = await startPostgres();
    provider = await startProvider({ groups: { alice: ['admins'] } });
    const settings = (more: Record<string, unknown> = {}) => ({
      storage: { type: 'postgres', url: pg.url, schema: 'oidc_cluster' },
      credentialSecret: 'cluster-secret',
      adminAuth: { type: 'oidc', issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scope: 'openid profile groups', permissions: { admins: '*' }, ...more },
    });
    a = await startServer(settings(), undefined, { editorLogin: 'code' });
    // Logins begun at B come back to A, the registered callback; the provider posts its logouts to B.
    b = await startServer(settings({ callbackURL: a.at('auth/strategy/callback') }), undefined, { editorLogin: 'code' });
    provider.register({ callbackURL: a.at('auth/strategy/callback'), backchannelLogoutURL: b.at('auth/backchannel-logout') });
  });
  after(async () => {
    await a?.dispose();
    await b?.dispose();
    await provider?.close();
    await pg?.dispose();
  });

  test('a login begun on one instance completes on the other; a back-channel logout at one ends the session on both within 1 s', async () => {
    const jar = new CookieJar();
    // Begun at B; the provider calls back to A (the registered callback), the code is exchanged at B.
    const start = await browse(jar, b.at('auth/strategy'));
    const back = await signIn(jar, start.headers.get('location')!, 'alice');
    const res = await fetch(back.url, { redirect: 'manual', headers: { cookie: jar.header(b.url)! } });
    const code = landing(res, a).get('code');
    assert.ok(code, res.headers.get('location') ?? '');
    const token = (await exchange(b, code)).body.accessToken as string;
    assert.equal((await request(a.at('flows'), { token })).status, 200);
    assert.equal((await request(b.at('flows'), { token })).status, 200);

    await signOutAtProvider(jar, provider.issuer);
    const loggedOut = Date.now();
    await eventually(async () => (await request(b.at('flows'), { token })).status === 401, 5000);
    await eventually(async () => (await request(a.at('flows'), { token })).status === 401, 5000);
    assert.ok(Date.now() - loggedOut < 1000, `took ${Date.now() - loggedOut} ms`);
  });
});
