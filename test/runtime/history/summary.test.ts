import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarise } from '../../../src/runtime/history/compare.js';
import type { FlowNodeConfig } from '../../../src/storage/contract.js';

/** The texts a deploy makes (last node wins on a repeated id, as in its map). */
const texts = (flows: FlowNodeConfig[]) => new Map(flows.map((n) => [n.id, JSON.stringify(n)]));
const node = (id: string, z: string, extra: Record<string, unknown> = {}): FlowNodeConfig => ({ id, type: 'comment', z, x: 1, y: 1, wires: [], ...extra });

const base: FlowNodeConfig[] = [
  { id: 't1', type: 'tab', label: 'one' },
  { id: 't2', type: 'tab', label: 'two' },
  node('a', 't1', { wires: [['b']] }),
  node('b', 't1'),
  node('c', 't2'),
  { id: 'cfg', type: 'mqtt-broker', broker: 'local' },
];

const edits: Record<string, (flows: FlowNodeConfig[]) => FlowNodeConfig[]> = {
  unchanged: (f) => f.map((n) => ({ ...n })),
  'one property': (f) => f.map((n) => (n.id === 'b' ? { ...n, name: 'renamed' } : n)),
  'position only': (f) => f.map((n) => (n.id === 'b' ? { ...n, x: 99 } : n)),
  rewired: (f) => f.map((n) => (n.id === 'a' ? { ...n, wires: [['c']] } : n)),
  added: (f) => [...f, node('d', 't2')],
  removed: (f) => f.filter((n) => n.id !== 'c' && n.id !== 'cfg'),
  'removed and added, same count': (f) => [...f.filter((n) => n.id !== 'c'), node('e', 't2')],
  'repeated id in the new flows': (f) => [...f.filter((n) => n.id !== 'c'), node('b', 't1')],
};

test('the history summary from the deploy texts equals the one from comparing the configurations', () => {
  for (const [name, edit] of Object.entries(edits)) {
    const after = edit(base);
    assert.deepEqual(summarise(base, after, { before: texts(base), after: texts(after) }), summarise(base, after), name);
  }
});

test('a repeated id in the older flows does not hide a removal', () => {
  const before = [...base, node('b', 't1')];
  const after = base.filter((n) => n.id !== 'c');
  assert.deepEqual(summarise(before, after, { before: texts(before), after: texts(after) }), { t2: { added: 0, changed: 0, removed: 1 } });
});
