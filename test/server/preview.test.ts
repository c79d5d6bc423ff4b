import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startServer, login, request, adminAuth, READER_PASSWORD, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

type Node = Record<string, unknown> & { id: string; type: string };
const v2 = { 'Runtime-API-Version': 'v2' };
const SEED = process.env.RUNNEL_FUZZ_SEED === undefined ? undefined : Number(process.env.RUNNEL_FUZZ_SEED);

/**
 * Random configurations: up to three tabs (some disabled), nodes of a few core types (and a type
 * nobody provides, so tabs wait), config nodes referenced by regular nodes, random wires. The
 * second configuration is the first mutated: properties changed, nodes rewired, moved, disabled,
 * removed and added, credentials set.
 */
const TYPES = ['comment', 'junction', 'debug', 'debug', 'no-such-type'];

const configArb = fc
  .record({
    tabs: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
    nodes: fc.array(fc.record({ tab: fc.nat(2), type: fc.constantFrom(...TYPES), name: fc.constantFrom('a', 'b'), wire: fc.option(fc.nat(11)), config: fc.boolean() }), { maxLength: 12 }),
    configs: fc.array(fc.record({ tab: fc.option(fc.nat(2)), name: fc.constantFrom('x', 'y') }), { maxLength: 2 }),
  })
  .map(({ tabs, nodes, configs }) => {
    const flows: Node[] = tabs.map((disabled, i) => ({ id: `t${i}`, type: 'tab', label: `t${i}`, disabled }));
    configs.forEach((c, i) => flows.push({ id: `cfg${i}`, type: 'junction', name: c.name, ...(c.tab === null ? {} : { z: `t${c.tab % tabs.length}` }) }));
    nodes.forEach((n, i) => {
      const wires = n.wire === null || n.wire >= nodes.length ? [] : [[`n${n.wire}`]];
      flows.push({ id: `n${i}`, type: n.type, z: `t${n.tab % tabs.length}`, name: n.name, x: i, y: i, wires, ...(n.config && configs.length ? { ref: 'cfg0' } : {}) });
    });
    return flows;
  });

const mutationArb = fc.record({
  perNode: fc.array(fc.constantFrom('keep', 'keep', 'rename', 'rewire', 'move', 'disable', 'remove', 'credentials'), { minLength: 20, maxLength: 20 }),
  added: fc.nat(2),
  globalEnv: fc.boolean(),
});

function mutate(flows: Node[], m: { perNode: string[]; added: number; globalEnv: boolean }): Node[] {
  const ids = flows.filter((n) => n.type !== 'tab').map((n) => n.id);
  const out: Node[] = [];
  flows.forEach((n, i) => {
    const op = m.perNode[i % m.perNode.length];
    if (n.type === 'tab') out.push(op === 'disable' ? { ...n, disabled: !n.disabled } : op === 'rename' ? { ...n, env: [{ name: 'E', value: '1', type: 'str' }] } : n);
    else if (op === 'rename') out.push({ ...n, name: `${n.name}'` });
    else if (op === 'rewire' && 'wires' in n) out.push({ ...n, wires: [[ids[(i * 7) % ids.length]]] });
    else if (op === 'move' && 'x' in n) out.push({ ...n, x: Number(n.x) + 5 });
    else if (op === 'disable' && 'x' in n) out.push({ ...n, d: true });
    else if (op === 'credentials') out.push({ ...n, credentials: { secret: `s${i}` } });
    else if (op !== 'remove') out.push(n);
  });
  for (let i = 0; i < m.added; i++) out.push({ id: `new${i}`, type: 'comment', z: 't0', x: 1, y: 1, wires: [] });
  if (m.globalEnv) out.push({ id: 'genv', type: 'global-config', env: [{ name: 'G', value: '1', type: 'str' }] });
  return out;
}

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('POST /flows/preview', () => {
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'preview-secret', logging: { level: 'fatal' } });
    token = await login(server);
  });
  after(() => server.dispose());

  for (const type of ['full', 'nodes', 'flows'] as const) {
    test(`the preview's stop and start sets are what a ${type} deploy then stops and starts (property)`, async () => {
      await fc.assert(
        fc.asyncProperty(configArb, mutationArb, async (first, m) => {
          const runtime = server.instance.runtime;
          await runtime.deploy({ flows: structuredClone(first), type: 'full' });
          const second = mutate(first, m);
          const before = (await request(server.at('flows'), { token, headers: v2 })).body;
          const preview = await request(server.at('flows/preview'), { method: 'POST', token, headers: { ...v2, 'Runtime-Deployment-Type': type }, json: { flows: second, rev: before.rev } });
          assert.equal(preview.status, 200, preview.text);
          assert.deepEqual((await request(server.at('flows'), { token, headers: v2 })).body, before, 'the preview changed nothing');
          const result = await runtime.deploy({ flows: structuredClone(second), type });
          assert.equal(preview.body.rev, result.rev);
          assert.deepEqual(sorted(preview.body.stop), sorted(result.stopped));
          assert.deepEqual(sorted(preview.body.start), sorted(result.restarted));
          assert.equal(preview.body.type, type);
        }),
        { numRuns: 40, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
    });
  }

  test('answers the would-be rev, rewired nodes, missing types, credential changes and validation errors; a reader may not', async () => {
    const flows = [
      { id: 't1', type: 'tab', label: 't1' },
      { id: 'a', type: 'comment', z: 't1', x: 1, y: 1, wires: [] },
      { id: 'b', type: 'debug', z: 't1', x: 1, y: 1, wires: [] },
      { id: 'hr', type: 'http request', z: 't1', x: 1, y: 1, wires: [], credentials: { user: 'u', password: 'p' } },
    ];
    const rev = await deploy(server, flows, { api: 'v2', token });
    const next = [flows[0], { ...flows[1], wires: [['b']] }, flows[2], { id: 'm', type: 'missing-one', z: 't1', x: 1, y: 1, wires: [] }];
    const r = await request(server.at('flows/preview'), { method: 'POST', token, headers: { ...v2, 'Node-RED-Deployment-Type': 'nodes' }, json: { flows: next } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.rewire, ['a']);
    assert.deepEqual(r.body.missingTypes, ['missing-one']);
    assert.deepEqual(r.body.credentials, { added: [], changed: [], removed: ['hr'] });
    assert.deepEqual(r.body.errors, []);
    assert.equal(r.body.unchanged, 2);
    assert.deepEqual(r.body.stop, ['hr']);
    const bad = await request(server.at('flows/preview'), { method: 'POST', token, headers: v2, json: { flows: [{ id: 'x' }] } });
    assert.equal(bad.status, 200);
    assert.deepEqual(bad.body.errors.map((e: { code: string }) => e.code), ['invalid_flows']);
    const stale = await request(server.at('flows/preview'), { method: 'POST', token, headers: v2, json: { flows, rev: '0'.repeat(64) } });
    assert.deepEqual([stale.status, stale.body.code], [409, 'version_mismatch']);
    const badType = await request(server.at('flows/preview'), { method: 'POST', token, headers: { 'Runtime-Deployment-Type': 'sideways' }, json: flows });
    assert.deepEqual([badType.status, badType.body.code], [400, 'invalid_deployment_type']);
    const reader = await login(server, 'reader', READER_PASSWORD, 'read');
    const denied = await request(server.at('flows/preview'), { method: 'POST', token: reader, json: flows });
    assert.equal(denied.status, 401);
    assert.equal((await request(server.at('flows'), { token, headers: v2 })).body.rev, rev);
  });
});
