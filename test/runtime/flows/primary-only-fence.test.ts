import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FlowSet } from '../../../src/runtime/flows/flow-set.js';
import { eventually, request, startServer, type TestServer } from '../../helpers/server.js';

/**
 * The fence a primary raises the moment it can no longer prove its lease: messages to its
 * primary-only tabs are dropped at once, also to a primary-only tab that a deploy planned while it
 * was the primary starts after the fence fell (the tabs are stopped later, in the deploy lock).
 */

const PRIMARY_ONLY = [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true', type: 'str' }];
const counter = (tab: string, key: string) => [
  { id: tab, type: 'tab', label: tab, env: PRIMARY_ONLY },
  { id: `${tab}-tick`, type: 'inject', z: tab, repeat: '0.05', once: true, onceDelay: 0, props: [{ p: 'payload', v: '1', vt: 'num' }], x: 1, y: 1, wires: [[`${tab}-count`]] },
  { id: `${tab}-count`, type: 'function', z: tab, outputs: 0, x: 1, y: 1, wires: [], func: `global.set('${key}', (global.get('${key}') || 0) + 1);` },
];
const web = [
  { id: 'web', type: 'tab', label: 'Web' },
  { id: 'in', type: 'http in', z: 'web', url: '/counts', method: 'get', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 'web', outputs: 1, x: 1, y: 1, wires: [['out']], func: "msg.payload = {a: global.get('a') || 0, b: global.get('b') || 0}; return msg;" },
  { id: 'out', type: 'http response', z: 'web', x: 1, y: 1, wires: [] },
];

describe('primary-only fence', () => {
  let server: TestServer;
  let flowSet: FlowSet;
  before(async () => {
    server = await startServer();
    // The fence is the cluster follower's; a single instance is the primary, so it is raised here by hand.
    flowSet = (server.instance.runtime as unknown as { flowSet: FlowSet }).flowSet;
  });
  after(async () => server?.dispose());

  const counts = async () => (await request(`${server.url}counts`)).body as { a: number; b: number };
  const deploy = async (flows: unknown[]) => {
    const r = await request(server.at('flows'), { method: 'POST', headers: { 'Runtime-API-Version': 'v2' }, json: { flows } });
    assert.equal(r.status, 200, r.text);
  };

  it('drops messages to the running primary-only tabs and to one a deploy starts after the fence fell, until it is lifted', async () => {
    await deploy([...web, ...counter('old', 'a')]);
    await eventually(async () => (await counts()).a > 2, 5000);
    flowSet.fencePrimaryOnly();
    const fencedAt = (await counts()).a;
    await deploy([...web, ...counter('old', 'a'), ...counter('new', 'b')]);
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(await counts(), { a: fencedAt, b: 0 }, 'no primary-only node ran while fenced');
    flowSet.unfencePrimaryOnly();
    await eventually(async () => {
      const c = await counts();
      return c.a > fencedAt && c.b > 0;
    }, 5000);
  });
});
