import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { node, flowSuite, type Conf } from './flow.js';

describe('batch node', () => {
  const summary = (msgs: Record<string, any>[]) => msgs.map((m) => [m.payload, m.parts.id, m.parts.index, m.parts.count]);
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'batch' },
      node('count', 'batch', { mode: 'count', count: 2, overlap: 0, interval: 10, allowEmptySequence: false, topics: [] }, [['cap-count']]),
      node('overlap', 'batch', { mode: 'count', count: 3, overlap: 1 }, [['cap-overlap']]),
      node('interval', 'batch', { mode: 'interval', interval: 0.05, allowEmptySequence: true }, [['cap-interval']]),
      node('concat', 'batch', { mode: 'concat', topics: [{ topic: 'a' }, { topic: 'b' }] }, [['cap-concat']]),
      ...['cap-count', 'cap-overlap', 'cap-interval', 'cap-concat'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('count mode groups every count messages; reset discards a partial group', async () => {
    for (const [i, p] of ['a', 'b', 'c'].entries()) receive('count', { _msgid: `m${i}`, payload: p });
    receive('count', { reset: true });
    for (const [i, p] of ['d', 'e'].entries()) receive('count', { _msgid: `n${i}`, payload: p });
    assert.deepEqual(summary(await t.capture.waitFor('cap-count', 4)), [
      ['a', 'm0', 0, 2], ['b', 'm0', 1, 2], ['d', 'n0', 0, 2], ['e', 'n0', 1, 2],
    ]);
  });

  test('overlap starts each group with the end of the previous one', async () => {
    for (const [i, p] of [1, 2, 3, 4, 5].entries()) receive('overlap', { _msgid: `o${i}`, payload: p });
    assert.deepEqual(summary(await t.capture.waitFor('cap-overlap', 6)), [
      [1, 'o0', 0, 3], [2, 'o0', 1, 3], [3, 'o0', 2, 3], [3, 'o2', 0, 3], [4, 'o2', 1, 3], [5, 'o2', 2, 3],
    ]);
  });

  test('interval mode sends what arrived in each interval, and empty sequences when allowed', async () => {
    const start = t.capture.of('cap-interval').length;
    receive('interval', { _msgid: 'i0', payload: 'x' });
    receive('interval', { _msgid: 'i1', payload: 'y' });
    const msgs = await t.capture.waitFor('cap-interval', start + 3);
    const sent = msgs.slice(start);
    const xi = sent.findIndex((m) => m.payload === 'x');
    assert.deepEqual(summary(sent.slice(xi, xi + 2)), [['x', 'i0', 0, 2], ['y', 'i0', 1, 2]]);
    const empty = sent.find((m) => m.payload === null)!;
    assert.deepEqual([empty.parts.index, empty.parts.count], [0, 1]);
  });

  test('concat joins one complete sequence per topic, in topic order', async () => {
    receive('concat', { _msgid: 'b0', topic: 'b', payload: 'B0', parts: { id: 'gb', index: 0, count: 1 } });
    receive('concat', { _msgid: 'a0', topic: 'a', payload: 'A0', parts: { id: 'ga', index: 0, count: 2 } });
    receive('concat', { _msgid: 'z', topic: 'z', payload: 'ignored', parts: { id: 'gz', index: 0, count: 1 } });
    receive('concat', { _msgid: 'a1', topic: 'a', payload: 'A1', parts: { id: 'ga', index: 1, count: 2 } });
    assert.deepEqual(summary(await t.capture.waitFor('cap-concat', 3)), [['A0', 'a0', 0, 3], ['A1', 'a0', 1, 3], ['B0', 'a0', 2, 3]]);
  });
});

describe('batch node errors', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'batch errors' },
    node('big', 'batch', { mode: 'count', count: 5, overlap: 0 }, [['cap-big']]),
    node('cat', 'batch', { mode: 'concat', topics: [{ topic: 'a' }] }, [['cap-cat']]),
    node('bad', 'batch', { mode: 'count', count: 2, overlap: 2 }),
    node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]),
    ...['cap-big', 'cap-cat', 'errors'].map((id) => node(id, 'test-capture')),
  ], { nodeMessageBufferMaxLength: 2 });
  const errorsOf = (source: string) => t.capture.of('errors').filter((m) => m.error.source.id === source).map((m) => [m.error.message, m.payload]);

  test('over the buffer limit one error, Node-RED\'s text, names the message that overflowed it', async () => {
    for (const p of [1, 2, 3]) t.receive('big', { payload: p });
    await t.capture.waitFor('errors');
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(errorsOf('big'), [['too many pending messages in batch node', 3]]);
  });

  test('concat mode reports a message without parts with Node-RED\'s text', async () => {
    t.receive('cat', { topic: 'a', payload: 'p' });
    await t.capture.waitFor('errors', 2);
    assert.deepEqual(errorsOf('cat'), [['no parts property in message', 'p']]);
  });
});

describe('batch node honouring msg.parts', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'batch parts' },
    node('honour', 'batch', { mode: 'count', count: 2, overlap: 0, honourParts: true }, [['cap-honour']]),
    node('cap-honour', 'test-capture'),
  ]);

  test('the last message of an incoming sequence ends the batch early', async () => {
    [1, 2, 3].forEach((p, index) => t.receive('honour', { _msgid: `h${index}`, payload: p, parts: { id: 'seq', index, count: 3, type: 'array', len: 1 } }));
    const msgs = await t.capture.waitFor('cap-honour', 3);
    assert.deepEqual(msgs.map((m) => [m.payload, m.parts]), [
      [1, { id: 'h0', index: 0, count: 2, type: 'array', len: 1 }],
      [2, { id: 'h0', index: 1, count: 2, type: 'array', len: 1 }],
      [3, { id: 'h2', index: 0, count: 1, type: 'array', len: 1 }],
    ]);
  });
});
