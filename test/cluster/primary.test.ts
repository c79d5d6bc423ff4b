import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';

/** Primary election, primary-only tabs and the cluster view, with the primary SIGKILLed. */

const TAKEOVER_BOUND_MS = 10_000;

const flows = [
  { id: 'sched', type: 'tab', label: 'Scheduler', env: [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true', type: 'str' }] },
  { id: 'tick', type: 'inject', z: 'sched', repeat: '0.1', once: true, onceDelay: 0, props: [{ p: 'payload', v: '1', vt: 'num' }], x: 1, y: 1, wires: [['count']] },
  { id: 'count', type: 'function', z: 'sched', outputs: 0, x: 1, y: 1, wires: [], func: "global.set('ticks', (global.get('ticks') || 0) + 1);" },
  { id: 'web', type: 'tab', label: 'Web' },
  { id: 'in', type: 'http in', z: 'web', url: '/ticks', method: 'get', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 'web', outputs: 1, x: 1, y: 1, wires: [['out']], func: "msg.payload = {ticks: global.get('ticks') || 0}; return msg;" },
  { id: 'out', type: 'http response', z: 'web', x: 1, y: 1, wires: [] },
];

describe('cluster: primary-only tabs and GET /cluster', { timeout: 120_000 }, () => {
  let nodes: ClusterInstance[];
  let token: string;

  const suite = clusterSuite('primary', 3, { instanceUrl: 'http://127.0.0.1:9/' });
  before(async () => {
    ({ nodes } = suite);
    const r = await request(nodes[0]!.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: 'read', username: 'admin', password: ADMIN_PASSWORD },
    });
    token = r.body.access_token;
  });

  const view = async (n: ClusterInstance) => (await request(n.at('cluster'), { token })).body.instances as Array<Record<string, unknown>>;
  const ticks = async (n: ClusterInstance) => ((await request(n.at('ticks'))).body as { ticks: number }).ticks;

  it('lists every instance with exactly one primary, the same from every instance', async () => {
    const views = await eventually(async () => {
      const all = await Promise.all(nodes.map(view));
      return all.every((v) => v.length === 3 && v.filter((i) => i.primary).length === 1) ? all : undefined;
    }, 10_000, 100);
    for (const v of views!) assert.deepEqual(v.map((i) => i.id), ['node0', 'node1', 'node2']);
    const one = views![0]![0]!;
    assert.deepEqual(Object.keys(one).sort(), ['epoch', 'id', 'lastSeen', 'modules', 'primary', 'rev', 'state', 'url', 'version']);
    assert.equal(one.url, 'http://127.0.0.1:9/');
    assert.equal(one.state, 'start');
    assert.ok(!Number.isNaN(Date.parse(one.lastSeen as string)));
    assert.equal((await request(nodes[0]!.at('cluster'))).status, 401);
  });

  it('runs a primary-only tab on the primary alone, and moves it within the bound when the primary is SIGKILLed', async (t) => {
    const admin = (await request(nodes[1]!.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
    })).body.access_token;
    const deployed = await request(nodes[1]!.at('flows'), { method: 'POST', token: admin, headers: { 'Runtime-API-Version': 'v2' }, json: { flows } });
    assert.equal(deployed.status, 200, deployed.text);
    for (const n of nodes) await eventually(async () => (await ticks(n)) !== undefined, 5000);

    const primaryId = (await view(nodes[0]!)).find((i) => i.primary)!.id;
    const primary = nodes.find((n) => n.id === primaryId)!;
    const others = nodes.filter((n) => n !== primary);
    await eventually(async () => (await ticks(primary)) > 3, 5000);
    // Sampled over a second: only the primary's scheduler runs.
    for (let i = 0; i < 5; i++) {
      for (const n of others) assert.equal(await ticks(n), 0, `${n.id} ran the primary-only tab`);
      await new Promise((r) => setTimeout(r, 200));
    }

    const killedAt = Date.now();
    primary.process.child.kill('SIGKILL');
    await primary.process.exited;
    const successor = await eventually(async () => {
      for (const n of others) if ((await ticks(n)) > 0) return n;
      return undefined;
    }, TAKEOVER_BOUND_MS, 50);
    const takeover = Date.now() - killedAt;
    t.diagnostic(`primary-only tab running again ${takeover} ms after SIGKILL of the primary`);
    assert.ok(takeover < TAKEOVER_BOUND_MS);
    const survivor = others.find((n) => n !== successor)!;
    assert.equal(await ticks(survivor), 0, 'never on two instances');
    const after = await eventually(async () => {
      const v = await view(survivor);
      // The successor's heartbeat saying so may come a beat after the dead instance drops out.
      return v.length === 2 && v.some((i) => i.primary) ? v : undefined;
    }, 15_000, 250);
    assert.deepEqual(after!.map((i) => [i.id, i.primary]).sort(), others.map((n) => [n.id, n === successor]).sort());
  });

  it('drops an instance that stops cleanly from the view within a heartbeat', async () => {
    const alive = nodes.filter((n) => n.process.child.exitCode === null && n.process.child.signalCode === null);
    const leaving = alive[0]!;
    leaving.process.child.kill('SIGTERM');
    await leaving.process.exited;
    // The view is answered from memory, read back with every heartbeat: the leaver is gone within one.
    await eventually(async () => (await view(alive[1]!)).map((i) => i.id).join() === alive[1]!.id, 2000, 100);
    // The last one standing is (or within an election round becomes) the primary.
    await eventually(async () => (await view(alive[1]!))[0]?.primary === true, 5000);
  });
});
