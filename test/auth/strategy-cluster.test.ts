import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ADMIN_PASSWORD, adminAuth, request } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { killRunnels, spawnRunnelWith, type RunnelProcess } from '../helpers/process.js';
import { browse, CLIENT_ID, CLIENT_SECRET, CookieJar, signIn, signOutAtProvider, startProvider, type TestProvider } from './oidc-provider.js';
import { exchange, landing, recipeDir } from './strategy-recipe.js';

/** One Runnel process of a cluster, as these tests address it. */
interface Node {
  url: string;
  at(p: string): string;
}

/** How long a logout or revocation may take to reach every instance. */
const PROPAGATION_BOUND_MS = 1000;

/**
 * A login begun at `first` whose callback the balancer (no sticky sessions) sends, with the
 * browser's cookie, to `second`: the one-time code it lands the editor with.
 */
async function loginAcross(jar: CookieJar, first: Node, second: Node, username: string): Promise<string> {
  const start = await browse(jar, first.at('auth/strategy'));
  assert.equal(start.status, 302);
  const back = new URL((await signIn(jar, start.headers.get('location')!, username)).url);
  const res = await fetch(second.at(`${back.pathname}${back.search}`), { redirect: 'manual', headers: { cookie: jar.header(first.url)! } });
  const code = landing(res, second).get('code');
  assert.ok(code, `the login completed on the other instance: ${res.headers.get('location')}`);
  return code;
}

/** Exchanges `code` at `node`: the editor's session token. */
async function sessionToken(node: Node, code: string): Promise<string> {
  const exchanged = await exchange(node, code);
  assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
  return exchanged.body.accessToken as string;
}

async function status(node: Node, token: string): Promise<number> {
  return (await request(node.at('flows'), { token })).status;
}

/**
 * Milliseconds until every instance refuses every token (polled together, 10 ms apart); fails
 * beyond 5 s, so a missed logout shows as such rather than as a slow one.
 */
async function untilRefusedEverywhere(nodes: Node[], tokens: string[]): Promise<number> {
  const began = performance.now();
  await Promise.all(nodes.flatMap((node) => tokens.map(async (token) => {
    while ((await status(node, token)) !== 401) {
      if (performance.now() - began > 5000) throw new Error(`${node.url} still accepts a token after 5 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
  })));
  return performance.now() - began;
}

async function makeAutomationToken(node: Node, token: string, name: string): Promise<string> {
  const made = await request(node.at('auth/tokens'), { method: 'POST', token, json: { name, scope: 'flows.read' } });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  return made.body.token as string;
}

/**
 * Node-RED's passport-openidconnect recipe on three Runnel processes sharing PostgreSQL behind a
 * balancer without sticky sessions: each step of a login may reach any instance.
 */
describe('a strategy login on a 3-instance cluster without sticky sessions', () => {
  let pg: TestPostgres;
  let provider: TestProvider;
  let root: string;
  const nodes: Node[] = [];

  before(async () => {
    pg = await startPostgres();
    root = await tempDir();
    provider = await startProvider();
    const start = async (id: string, callbackURL?: string): Promise<RunnelProcess> => {
      const dir = path.join(root, id);
      const settings = `storage: { type: "postgres", url: "${pg.url}", schema: "strategy_cluster" }, credentialSecret: "cluster-secret", instanceId: "${id}", logging: { level: "warn" },`;
      await recipeDir(dir, provider.issuer, { settings, ...(callbackURL ? { callbackURL } : {}) });
      await writeFile(path.join(dir, 'allowed.json'), JSON.stringify(['alice', 'bob']));
      return spawnRunnelWith(['start', '--settings', path.join(dir, 'settings.js'), '--user-dir', dir], dir);
    };
    const first = await start('node0');
    // The client's one registered redirect URI is node0's, whichever instance began the login.
    const callbackURL = new URL('auth/strategy/callback', first.url).href;
    const others = await Promise.all([start('node1', callbackURL), start('node2', callbackURL)]);
    for (const p of [first, ...others]) nodes.push({ url: p.url, at: (q) => new URL(q.replace(/^\//, ''), p.url).href });
    provider.register({ callbackURL });
  });
  after(async () => {
    killRunnels();
    await provider?.close();
    await pg?.dispose();
    await removeDir(root);
  });

  test('begun on one instance, called back on another, exchanged once on the third; a revocation there ends it on all three within 1 s', async (t) => {
    const what = 'revocation';
    const [n0, n1, n2] = nodes as [Node, Node, Node];
    const code = await loginAcross(new CookieJar(), n0, n1, 'alice');
    const alice = await sessionToken(n2, code);
    const reused = await exchange(n0, code);
    assert.equal(reused.status, 400);
    assert.equal(reused.body.error, 'invalid_grant');
    const automation = await makeAutomationToken(n1, alice, 'deploys');
    for (const node of nodes) assert.equal((await request(node.at('settings'), { token: alice })).body.user?.username, 'alice');

    const bob = await sessionToken(n0, await loginAcross(new CookieJar(), n1, n2, 'bob'));
    const revoked = await request(n2.at('auth/sessions/alice'), { method: 'DELETE', token: bob });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const took = await untilRefusedEverywhere(nodes, [alice, automation]);
    t.diagnostic(`refused on all three ${Math.round(took)} ms after the ${what} answered`);
    assert.ok(took < PROPAGATION_BOUND_MS, `took ${Math.round(took)} ms`);
    for (const node of nodes) assert.equal(await status(node, bob), 200, 'another user stays signed in');
  });
});

/**
 * The built-in OIDC login on three Runnel processes sharing PostgreSQL: the provider calls back to
 * one, the browser's requests reach any, and the provider posts its back-channel logouts to the third.
 */
describe('adminAuth.type "oidc" on a 3-instance cluster', () => {
  let pg: TestPostgres;
  let provider: TestProvider;
  let cluster: TestCluster;
  let nodes: Node[];

  before(async () => {
    pg = await startPostgres();
    provider = await startProvider({ groups: { alice: ['admins'], bob: ['admins'] } });
    cluster = await startCluster(pg.url, 'oidc_cluster', 3, {
      adminAuth: {
        type: 'oidc', issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scope: 'openid profile groups',
        permissions: { admins: '*' }, users: adminAuth().users.slice(0, 1),
      },
    });
    nodes = cluster.instances;
    // Without callbackURL, a login's redirect URI is the origin it began at: node0's here.
    provider.register({ callbackURL: nodes[0]!.at('auth/strategy/callback'), backchannelLogoutURL: nodes[2]!.at('auth/backchannel-logout') });
  });
  after(async () => {
    await cluster?.stop().catch(() => undefined);
    killRunnels();
    await provider?.close();
    await pg?.dispose();
  });

  test('begun on instance 1, completed on instance 2; a back-channel logout delivered to instance 3 ends the sessions and tokens on all three within 1 s', async (t) => {
    const what = "provider's logout page";
    const [n0, n1, n2] = nodes as [Node, Node, Node];
    const jar = new CookieJar();
    const alice = await sessionToken(n2, await loginAcross(jar, n0, n1, 'alice'));
    const automation = await makeAutomationToken(n0, alice, 'deploys');
    const bob = await sessionToken(n1, await loginAcross(new CookieJar(), n0, n2, 'bob'));
    for (const node of nodes) {
      assert.equal((await request(node.at('settings'), { token: alice })).body.user?.username, 'alice');
      assert.equal(await status(node, automation), 200);
    }

    // The provider posts the logout token to instance 3 before its logout page answers.
    await signOutAtProvider(jar, provider.issuer);
    const took = await untilRefusedEverywhere(nodes, [alice, automation]);
    t.diagnostic(`refused on all three ${Math.round(took)} ms after the ${what} answered`);
    assert.ok(took < PROPAGATION_BOUND_MS, `took ${Math.round(took)} ms`);
    for (const node of nodes) assert.equal(await status(node, bob), 200, 'another user stays signed in');
  });

  test('a code exchanged at all three instances at once is exchanged once', async () => {
    const [n0, n1] = nodes as [Node, Node, Node];
    for (let round = 0; round < 5; round++) {
      const code = await loginAcross(new CookieJar(), n0, n1, 'bob');
      const answers = await Promise.all(nodes.map((node) => exchange(node, code)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400, 400], `round ${round}`);
    }
  });

  test("an admin's revocation at instance 3 ends a user's sessions and tokens on all three within 1 s", async (t) => {
    const what = 'revocation';
    const [n0, n1, n2] = nodes as [Node, Node, Node];
    const alice = await sessionToken(n1, await loginAcross(new CookieJar(), n0, n2, 'alice'));
    const automation = await makeAutomationToken(n0, alice, 'nightly');
    const admin = await passwordLogin(n2);
    const revoked = await request(n2.at('auth/sessions/alice'), { method: 'DELETE', token: admin });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const took = await untilRefusedEverywhere(nodes, [alice, automation]);
    t.diagnostic(`refused on all three ${Math.round(took)} ms after the ${what} answered`);
    assert.ok(took < PROPAGATION_BOUND_MS, `took ${Math.round(took)} ms`);
    for (const node of nodes) assert.equal(await status(node, admin), 200);
  });
});

/** The local emergency account's password grant at `node`. */
async function passwordLogin(node: Node): Promise<string> {
  const res = await request(node.at('auth/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD }).toString(),
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.access_token as string;
}
