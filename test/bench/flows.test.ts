import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchConfig, httpChainFlow, messageLoopFlow, withProbeBody, type FlowNode } from '../../bench/flows.js';

const ALLOWED = new Set(['tab', 'inject', 'change', 'function', 'debug', 'http in', 'http response']);

/** Every node sits on an existing tab, and every wire points at a node of the same tab. */
function assertWellFormed(flows: FlowNode[]): void {
  const byId = new Map(flows.map((n) => [n.id, n]));
  assert.equal(byId.size, flows.length, 'ids are unique');
  for (const n of flows) {
    assert.ok(ALLOWED.has(n.type), `unexpected type ${n.type}`);
    if (n.type === 'tab') continue;
    assert.equal(byId.get(n.z!)?.type, 'tab', `${n.id} is on a tab`);
    for (const target of (n.wires ?? []).flat()) assert.equal(byId.get(target)?.z, n.z, `${n.id} → ${target} stays on its tab`);
  }
}

test('benchConfig has exactly the requested nodes, at most 1000 per tab, the probe last', () => {
  for (const total of [3, 100, 1000, 10_000, 10_007]) {
    const { flows, probeFunctionId } = benchConfig(total, '/bench/probe', 'ready');
    assertWellFormed(flows);
    const nodes = flows.filter((n) => n.type !== 'tab');
    assert.equal(nodes.length, total);
    const perTab = new Map<string, number>();
    for (const n of nodes) perTab.set(n.z!, (perTab.get(n.z!) ?? 0) + 1);
    assert.ok(Math.max(...perTab.values()) <= 1000);
    assert.deepEqual(flows.slice(-3).map((n) => n.type), ['http in', 'function', 'http response']);
    assert.equal(flows.at(-3)!.url, '/bench/probe');
    assert.equal(flows.at(-2)!.id, probeFunctionId);
    assert.equal(flows.at(-2)!.func, 'msg.payload = "ready";\nreturn msg;');
  }
});

test('benchConfig chains start with a one-shot-free inject and end in an inactive debug', () => {
  const { flows } = benchConfig(100, '/p', 'x');
  const injects = flows.filter((n) => n.type === 'inject');
  assert.ok(injects.length > 0);
  for (const n of injects) assert.deepEqual([n.repeat, n.once], ['', false]);
  for (const n of flows.filter((n) => n.type === 'debug')) assert.equal(n.active, false);
});

test('withProbeBody changes only the probe function node', () => {
  const config = benchConfig(1000, '/p', 'v1');
  const changed = withProbeBody(config, 'v2');
  const differing = changed.filter((n, i) => JSON.stringify(n) !== JSON.stringify(config.flows[i]));
  assert.deepEqual(differing.map((n) => [n.id, n.func]), [[config.probeFunctionId, 'msg.payload = "v2";\nreturn msg;']]);
});

test('httpChainFlow puts exactly K nodes between http in and http response', () => {
  for (const k of [1, 10]) {
    const flows = httpChainFlow(k, '/bench/http', 'hello world');
    assertWellFormed(flows);
    assert.equal(flows.length, k + 3);
    let node = flows.find((n) => n.type === 'http in')!;
    const seen: string[] = [];
    while (node.type !== 'http response') {
      node = flows.find((n) => n.id === node.wires![0][0])!;
      seen.push(node.type);
    }
    assert.equal(seen.length, k + 1);
    assert.equal(seen[0], 'change');
    assert.deepEqual(flows.find((n) => n.type === 'change')!.rules, [{ t: 'set', p: 'payload', pt: 'msg', to: 'hello world', tot: 'str' }]);
  }
});

test('messageLoopFlow closes a ring of function nodes with an exit to the done node', () => {
  const flows = messageLoopFlow(500, 10, '/bench/loop-result');
  assertWellFormed(flows);
  const ring = flows.filter((n) => n.type === 'function' && n.outputs === 2);
  assert.equal(ring.length, 10);
  const ringIds = new Set(ring.map((n) => n.id));
  const exits = new Set(ring.map((n) => n.wires![1][0]));
  assert.equal(exits.size, 1);
  for (const n of ring) assert.ok(ringIds.has(n.wires![0][0]));
  assert.match(String(ring[0].func), /msg\.count >= 500/);
  assert.equal(flows.filter((n) => n.type === 'inject' && n.once === true).length, 1);
});
