import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';
import { Editor } from '../helpers/comms.js';

/** Three instances on one database: deploys, revs, credentials and tokens are the cluster's, not an instance's. */

const v2 = { 'Runtime-API-Version': 'v2' };
/** A liveness bound, not the propagation goal (1 s, measured by the bench's cluster section): generous for loaded CI machines. */
const PROPAGATED_WITHIN_MS = 15_000;

async function login(instance: ClusterInstance): Promise<string> {
  const r = await request(instance.at('auth/token'), {
    method: 'POST',
    json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
  });
  assert.equal(r.status, 200, r.text);
  return r.body.access_token as string;
}

/** A tab answering GET /hello with `text`, plus two function nodes counting their starts in global context. */
function helloFlows(text: string, a = 'A', b = 'B') {
  const counter = (name: string, label: string) =>
    ({ id: `f${name}`, type: 'function', z: 't1', name: label, func: 'return msg;', outputs: 1,
      initialize: `global.set('starts_${name}', (global.get('starts_${name}') || 0) + 1);`, x: 1, y: 1, wires: [] });
  return [
    { id: 't1', type: 'tab', label: 'Hello' },
    { id: 'in', type: 'http in', z: 't1', url: '/hello', method: 'get', x: 1, y: 1, wires: [['fn']] },
    { id: 'fn', type: 'function', z: 't1', outputs: 1, x: 1, y: 1, wires: [['out']],
      func: `msg.payload = {text: ${JSON.stringify(text)}, a: global.get('starts_a'), b: global.get('starts_b')}; return msg;` },
    { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
    counter('a', a),
    counter('b', b),
  ];
}

describe('cluster: three instances on one database', { timeout: 120_000 }, () => {
  let nodes: ClusterInstance[];
  let token: string;

  const suite = clusterSuite('propagation', 3);
  before(async () => {
    ({ nodes } = suite);
    token = await login(nodes[0]!);
  });

  const rev = async (n: ClusterInstance) => (await request(n.at('flows/state'), { token })).body.rev as string;
  const hello = async (n: ClusterInstance) => {
    const r = await request(n.at('hello'));
    return r.status === 200 ? (r.body as { text: string; a: number; b: number }) : undefined;
  };
  const deploy = (n: ClusterInstance, flows: unknown[], extra: { rev?: string; type?: string; credentials?: unknown } = {}) =>
    request(n.at('flows'), {
      method: 'POST', token,
      headers: { ...v2, ...(extra.type ? { 'Runtime-Deployment-Type': extra.type } : {}) },
      json: { flows, ...(extra.rev ? { rev: extra.rev } : {}), ...(extra.credentials ? { credentials: extra.credentials } : {}) },
    });

  it('accepts a token issued by one instance on every instance', async () => {
    for (const n of nodes) assert.equal((await request(n.at('flows'), { token })).status, 200, n.id);
  });

  it('serves a full deploy made on one instance from every instance, each reporting the new rev', async () => {
    const r = await deploy(nodes[0]!, helloFlows('one'));
    assert.equal(r.status, 200, r.text);
    for (const n of nodes) {
      await eventually(async () => (await hello(n))?.text === 'one', PROPAGATED_WITHIN_MS);
      await eventually(async () => (await rev(n)) === r.body.rev, PROPAGATED_WITHIN_MS);
    }
  });

  it('tells an editor of another instance once of each deploy it applies', async () => {
    const editor = new Editor(nodes[1]!.url);
    try {
      await editor.send({ auth: token });
      await editor.send({ subscribe: 'notification/runtime-deploy' });
      await editor.waitFor('notification/runtime-deploy');
      const r = await deploy(nodes[0]!, helloFlows('notice'));
      assert.equal(r.status, 200, r.text);
      const applied = () => editor.on('notification/runtime-deploy').filter((e) => e.data.revision === r.body.rev);
      await eventually(() => applied().length > 0, PROPAGATED_WITHIN_MS);
      // A second notice would be published with the first: give it time to arrive all the same.
      await sleep(300);
      assert.equal(applied().length, 1);
    } finally {
      editor.close();
    }
  });

  it('applies a nodes deploy on every instance by restarting only the changed node', async () => {
    const before = await Promise.all(nodes.map(hello));
    const current = await rev(nodes[1]!);
    const r = await deploy(nodes[1]!, helloFlows('one', 'A2'), { rev: current, type: 'nodes' });
    assert.equal(r.status, 200, r.text);
    for (const [i, n] of nodes.entries()) {
      await eventually(async () => (await rev(n)) === r.body.rev, PROPAGATED_WITHIN_MS);
      const after = (await hello(n))!;
      assert.equal(after.a, before[i]!.a + 1, `${n.id}: the changed node restarted once`);
      assert.equal(after.b, before[i]!.b, `${n.id}: the unchanged node kept running`);
    }
  });

  it('applies a full deploy everywhere by restarting every node', async () => {
    const before = await Promise.all(nodes.map(hello));
    const r = await deploy(nodes[2]!, helloFlows('two', 'A2'), { rev: await rev(nodes[2]!) });
    assert.equal(r.status, 200, r.text);
    for (const [i, n] of nodes.entries()) {
      await eventually(async () => (await hello(n))?.text === 'two', PROPAGATED_WITHIN_MS);
      const after = (await hello(n))!;
      assert.equal(after.b, before[i]!.b + 1, n.id);
    }
  });

  it('refuses a stale rev with 409 on any instance, whichever applied the newer one', async () => {
    const stale = await rev(nodes[0]!);
    const ok = await deploy(nodes[0]!, helloFlows('three'), { rev: stale });
    assert.equal(ok.status, 200, ok.text);
    for (const n of nodes.slice(1)) {
      const r = await deploy(n, helloFlows('never'), { rev: stale });
      assert.equal(r.status, 409, `${n.id}: ${r.text}`);
      assert.equal(r.body.code, 'version_mismatch');
    }
    for (const n of nodes) await eventually(async () => (await hello(n))?.text === 'three', PROPAGATED_WITHIN_MS);
  });

  it('shares credentials: deployed on one instance, visible (as has_) on the others', async () => {
    const flows = [...helloFlows('four'), { id: 'req', type: 'http request', z: 't1', x: 1, y: 1, wires: [] }];
    const r = await deploy(nodes[1]!, flows, { credentials: { req: { user: 'bob', password: 'pw' } } });
    assert.equal(r.status, 200, r.text);
    for (const n of nodes) {
      await eventually(async () => (await rev(n)) === r.body.rev, PROPAGATED_WITHIN_MS);
      const c = await request(n.at('credentials/http-request/req'), { token });
      assert.deepEqual(c.body, { user: 'bob', has_password: true }, n.id);
    }
  });

  it('lets exactly one of 200 concurrent deploys with the same rev win, and every instance converges on it', async () => {
    const base = await rev(nodes[0]!);
    await Promise.all(nodes.map((n) => eventually(async () => (await rev(n)) === base, PROPAGATED_WITHIN_MS)));
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      deploy(nodes[i % 3]!, helloFlows(`race ${i}`), { rev: base, type: 'flows' })));
    const winners = results.filter((r) => r.status === 200);
    assert.equal(winners.length, 1, JSON.stringify(results.map((r) => r.status)));
    assert.ok(results.every((r) => r.status === 200 || (r.status === 409 && r.body.code === 'version_mismatch')));
    const text = `race ${results.indexOf(winners[0]!)}`;
    for (const n of nodes) {
      await eventually(async () => (await rev(n)) === winners[0]!.body.rev, PROPAGATED_WITHIN_MS);
      assert.equal((await hello(n))?.text, text, n.id);
    }
  });

  it('deploys without a rev on an instance, whatever the others did just before', async () => {
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await deploy(nodes[i % 3]!, helloFlows(`norev ${i}`)));
    assert.deepEqual(results.map((r) => r.status), [200, 200, 200, 200, 200, 200]);
    for (const n of nodes) await eventually(async () => (await hello(n))?.text === 'norev 5', PROPAGATED_WITHIN_MS);
  });

  it('revokes a token everywhere within a second', async () => {
    const other = await login(nodes[1]!);
    for (const n of nodes) await eventually(async () => (await request(n.at('flows'), { token: other })).status === 200, 1000);
    const revoked = await request(nodes[2]!.at('auth/revoke'), { method: 'POST', token: other, json: { token: other } });
    assert.equal(revoked.status, 200, revoked.text);
    for (const n of nodes) await eventually(async () => (await request(n.at('flows'), { token: other })).status === 401, 1000);
    assert.equal((await request(nodes[0]!.at('flows'), { token })).status, 200);
  });
});
