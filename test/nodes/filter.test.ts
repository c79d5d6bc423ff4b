import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { node, type Conf, flowSuite } from './flow.js';

/** Lets already-queued deliveries run, so a short list means "not sent". */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('filter (rbe) node', () => {
  const feed = async (id: string, msgs: Record<string, unknown>[]) => {
    for (const m of msgs) receive(id, m);
    await settle();
    return t.capture.of(`cap-${id}`).map((m) => m.payload);
  };
  const rbe = (func: string, extra: Conf = {}) => ({ func, gap: '', start: '', inout: 'out', septopics: true, property: 'payload', topi: 'topic', ...extra });
  const t = flowSuite(() => {
    const ids: [string, Conf][] = [
      ['rbe', rbe('rbe')],
      ['rbei', rbe('rbei')],
      ['objects', rbe('rbe')],
      ['empty', rbe('rbe')],
      ['topics', rbe('rbe')],
      ['shared', rbe('rbe', { septopics: false })],
      ['deadband', rbe('deadband', { gap: '10' })],
      ['deadbandEq', rbe('deadbandEq', { gap: '10' })],
      ['deadband-in', rbe('deadband', { gap: '10', inout: 'in' })],
      ['narrowband', rbe('narrowband', { gap: '10', start: '50' })],
      ['percent', rbe('deadband', { gap: '10%' })],
      ['nested', rbe('rbe', { property: 'data.v', topi: 'meta.t' })],
    ];
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'filter' },
      ...ids.map(([id, conf]) => node(id, 'rbe', conf, [[`cap-${id}`]])),
      ...ids.map(([id]) => node(`cap-${id}`, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('rbe passes changes only; reset forgets the last value', async () => {
    assert.deepEqual(await feed('rbe', [{ payload: 1 }, { payload: 1 }, { payload: 2 }, { payload: '2' }, { payload: '2' }, { reset: true }, { payload: '2' }]), [1, 2, '2', '2']);
  });

  test('rbei ignores the first value', async () => {
    assert.deepEqual(await feed('rbei', [{ payload: 'a' }, { payload: 'a' }, { payload: 'b' }]), ['b']);
  });

  test('objects are compared deeply', async () => {
    assert.deepEqual(await feed('objects', [{ payload: { a: [1] } }, { payload: { a: [1] } }, { payload: { a: [2] } }]), [{ a: [1] }, { a: [2] }]);
  });

  test('a first empty object or null is no change, as Node-RED compares it with {}', async () => {
    const out = await feed('empty', [{ payload: {} }, { payload: {} }, { payload: { a: 1 } }, { payload: 1 }, { payload: null }, { payload: null }]);
    assert.deepEqual(out, [{ a: 1 }, 1, null]);
  });

  test('values are kept per topic unless septopics is false', async () => {
    const msgs = [{ topic: 'a', payload: 1 }, { topic: 'b', payload: 1 }, { topic: 'a', payload: 1 }];
    assert.deepEqual(await feed('topics', msgs), [1, 1]);
    assert.deepEqual(await feed('shared', msgs), [1]);
  });

  test('deadband passes moves beyond the gap, deadbandEq also equal to it', async () => {
    const values = [0, 5, 10, 21, 25].map((payload) => ({ payload }));
    assert.deepEqual(await feed('deadband', values), [0, 21]);
    assert.deepEqual(await feed('deadbandEq', values), [0, 10, 21]);
  });

  test('inout "in" compares with the last value received', async () => {
    assert.deepEqual(await feed('deadband-in', [0, 8, 16, 30].map((payload) => ({ payload }))), [0, 30]);
  });

  test('narrowband passes values near the start value and warns on non-numbers', async () => {
    assert.deepEqual(await feed('narrowband', [55, 80, 58, 'x'].map((payload) => ({ payload }))), [55, 58]);
    assert.ok(t.server.logs.some((l) => l.includes('no number found')));
  });

  test('a percentage gap is relative to the last value', async () => {
    assert.deepEqual(await feed('percent', [100, 109, 111, 120].map((payload) => ({ payload }))), [100, 111]);
  });

  test('the property and topic property may be nested', async () => {
    const out = await feed('nested', [{ data: { v: 1 }, meta: { t: 'x' } }, { data: { v: 1 }, meta: { t: 'y' } }, { data: { v: 1 }, meta: { t: 'x' } }, { payload: 9 }]);
    assert.equal(out.length, 2);
  });
});
