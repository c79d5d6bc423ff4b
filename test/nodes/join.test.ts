import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { flowSuite, node } from './flow.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Join behaviours around msg.parts in manual and automatic mode, as Node-RED 4 has them. */
describe('join node and msg.parts', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'join parts' },
    node('ignore', 'join', { mode: 'custom', build: 'array', count: '', timeout: '0.1', useparts: false }, [['ignore-out']]),
    node('nested', 'join', { mode: 'custom', build: 'array', count: '2', useparts: false }, [['nested-out']]),
    node('byid', 'join', { mode: 'custom', build: 'array', count: '', useparts: true }, [['byid-out']]),
    node('legacy', 'join', { mode: 'custom', build: 'array', count: '' }, [['legacy-out']]),
    node('auto', 'join', { mode: 'auto' }, [['auto-out']]),
    node('autoprop', 'join', { mode: 'auto' }, [['autoprop-out']]),
    ...['ignore-out', 'nested-out', 'byid-out', 'legacy-out', 'auto-out', 'autoprop-out'].map((id) => node(id, 'test-capture')),
  ]);
  const piece = (id: string, index: number, count: number, payload: unknown, extra: Record<string, unknown> = {}) =>
    ({ payload, parts: { id, index, count, type: 'array', len: 1, ...extra } });

  test('without "use msg.parts" a manual join ignores incoming parts: their count does not end it', async () => {
    [1, 2, 3].forEach((p, i) => t.receive('ignore', piece('s', i, 3, p)));
    await sleep(40);
    assert.equal(t.capture.of('ignore-out').length, 0);
    const [out] = await t.capture.waitFor('ignore-out');
    assert.deepEqual(out.payload, [1, 2, 3]);
    assert.equal('parts' in out, false);
  });

  test('without "use msg.parts" an outer sequence in parts.parts is kept', async () => {
    const outer = { id: 'outer', index: 4, count: 9 };
    t.receive('nested', { ...piece('s', 0, 2, 'a'), parts: { id: 's', index: 0, count: 2, parts: outer } });
    t.receive('nested', { ...piece('s', 1, 2, 'b'), parts: { id: 's', index: 1, count: 2, parts: outer } });
    const [out] = await t.capture.waitFor('nested-out');
    assert.deepEqual([out.payload, out.parts], [['a', 'b'], outer]);
  });

  test('using msg.parts with no count set, each parts.id is its own group', async () => {
    t.receive('byid', piece('x', 0, 2, 'x0'));
    t.receive('byid', piece('y', 0, 2, 'y0'));
    t.receive('byid', piece('x', 1, 2, 'x1'));
    t.receive('byid', piece('y', 1, 2, 'y1'));
    const out = await t.capture.waitFor('byid-out', 2);
    assert.deepEqual(out.map((m) => m.payload), [['x0', 'x1'], ['y0', 'y1']]);
  });

  test('a flow saved before the option existed uses msg.parts', async () => {
    t.receive('legacy', piece('l', 0, 2, 'a'));
    t.receive('legacy', piece('l', 1, 2, 'b'));
    const [out] = await t.capture.waitFor('legacy-out');
    assert.deepEqual(out.payload, ['a', 'b']);
  });

  test('auto mode: a reset without parts drops every sequence in progress', async () => {
    t.receive('auto', piece('r', 0, 2, 'dropped'));
    t.receive('auto', { reset: true });
    t.receive('auto', piece('r', 1, 2, 'second'));
    t.receive('auto', piece('r', 0, 2, 'first'));
    const [out] = await t.capture.waitFor('auto-out');
    assert.deepEqual(out.payload, ['first', 'second']);
  });

  test('auto mode: a repeated index replaces its value without counting twice', async () => {
    t.receive('auto', piece('d', 0, 2, 'old'));
    t.receive('auto', piece('d', 0, 2, 'new'));
    await sleep(30);
    assert.equal(t.capture.of('auto-out').length, 1);
    t.receive('auto', piece('d', 1, 2, 'last'));
    const out = await t.capture.waitFor('auto-out', 2);
    assert.deepEqual(out[1].payload, ['new', 'last']);
  });

  test('auto mode reads and rebuilds the property the split named in parts.property', async () => {
    t.receive('autoprop', { data: 'a', parts: { id: 'p', index: 0, count: 2, type: 'array', len: 1, property: 'data' } });
    t.receive('autoprop', { data: 'b', parts: { id: 'p', index: 1, count: 2, type: 'array', len: 1, property: 'data' } });
    const [out] = await t.capture.waitFor('autoprop-out');
    assert.deepEqual([out.data, out.payload], [['a', 'b'], undefined]);
  });
});
