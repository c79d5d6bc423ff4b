import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance, type TestCluster } from '../helpers/cluster.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';

/** The postgres context store: flow and global context shared by every instance. */

/** A liveness bound for loaded CI machines, not the propagation goal (the bench measures that). */
const PROPAGATED_WITHIN_MS = 15_000;

const flows = [
  { id: 't1', type: 'tab', label: 'Context' },
  { id: 'set', type: 'http in', z: 't1', url: '/set', method: 'get', x: 1, y: 1, wires: [['setfn']] },
  { id: 'setfn', type: 'function', z: 't1', outputs: 1, x: 1, y: 1, wires: [['out']],
    func: "global.set('shared.' + msg.req.query.k, msg.req.query.v); flow.set('last', msg.req.query.v); flow.set('n', (flow.get('n') || 0) + 1, 'local'); msg.payload = 'ok'; return msg;" },
  { id: 'get', type: 'http in', z: 't1', url: '/get', method: 'get', x: 1, y: 1, wires: [['getfn']] },
  { id: 'getfn', type: 'function', z: 't1', outputs: 1, x: 1, y: 1, wires: [['out']],
    func: "msg.payload = {shared: global.get('shared') || null, last: flow.get('last') || null, local: flow.get('n', 'local') || 0}; return msg;" },
  { id: 'cb', type: 'http in', z: 't1', url: '/cb', method: 'get', x: 1, y: 1, wires: [['cbfn']] },
  { id: 'cbfn', type: 'function', z: 't1', outputs: 1, x: 1, y: 1, wires: [['out']],
    func: "global.set('cb', msg.req.query.v, (err) => { msg.payload = err ? 'error: ' + err.message : 'stored'; node.send(msg); }); return null;" },
  { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
];

describe('cluster: the postgres context store', { timeout: 120_000 }, () => {
  let cluster: TestCluster;
  let nodes: ClusterInstance[];

  const suite = clusterSuite('context', 3, {
    contextStorage: { default: { module: 'postgres' }, local: { module: 'memory' } },
  });
  before(async () => {
    ({ cluster, nodes } = suite);
    const token = (await request(nodes[0]!.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
    })).body.access_token;
    const r = await request(nodes[0]!.at('flows'), { method: 'POST', token, json: flows });
    assert.equal(r.status, 204, r.text);
    for (const n of nodes) await eventually(async () => (await request(n.at('get'))).status === 200, 5000);
  });

  const get = async (n: ClusterInstance) => (await request(n.at('get'))).body as { shared: Record<string, string> | null; last: string | null; local: number };

  it('shares flow and global context written on one instance with the others; memory stores stay local', async () => {
    assert.equal((await request(nodes[0]!.at('set?k=a&v=1'))).text, 'ok');
    // The http answer comes before the write commits: node1 writes only once it has seen node0's,
    // or node0's later commit would rightly win (last writer wins per key).
    await eventually(async () => (await get(nodes[1]!)).shared?.a === '1', PROPAGATED_WITHIN_MS);
    assert.equal((await request(nodes[1]!.at('set?k=b&v=2'))).text, 'ok');
    for (const n of nodes) {
      await eventually(async () => {
        const v = await get(n);
        return v.last === '2' && v.shared?.a === '1' && v.shared?.b === '2';
      }, PROPAGATED_WITHIN_MS).catch(async (e) => {
        throw new Error(`${n.id}: ${JSON.stringify(await get(n))} ${e}`);
      });
    }
    // The memory store named `local` is each instance's own.
    const seen = await Promise.all(nodes.map(get));
    assert.deepEqual(seen.map((s) => s.local), [1, 1, 0]);
  });

  it('answers a set callback once the value is in the database, and a restarted instance reads it', async () => {
    assert.equal((await request(nodes[2]!.at('cb?v=kept'))).text, 'stored');
    const fresh = await cluster.add('node9');
    const r = await request(fresh.at('get'));
    assert.equal(r.status, 200);
    assert.equal((r.body as { last: string }).last, '2');
  });
});
