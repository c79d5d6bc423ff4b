import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

/** Strips what differs from run to run (ids) so messages can be compared exactly. */
const shape = (m: Record<string, any>) => {
  const { _msgid, ...rest } = m;
  assert.equal(typeof _msgid, 'string');
  if (rest.parts) rest.parts = { ...rest.parts, id: typeof rest.parts.id };
  return rest;
};

describe('split and join nodes', () => {
  const t = flowSuite(() => {
    const reduce = { mode: 'reduce', reduceExp: '$A + payload', reduceInit: '0', reduceInitType: 'num', reduceFixup: '$A / $N' };
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'split-join' },
      node('rt', 'split', { splt: '\\n', spltType: 'str', arraySplt: 1, arraySpltType: 'len', stream: false, addname: '' }, [['pieces', 'rt-join']]),
      node('rt-join', 'join', { mode: 'auto' }, [['joined']]),
      node('obj', 'split', { addname: 'topic' }, [['obj-pieces']]),
      node('len', 'split', { splt: '3', spltType: 'len', arraySplt: 2, arraySpltType: 'len' }, [['len-pieces', 'len-join']]),
      node('len-join', 'join', { mode: 'auto' }, [['len-joined']]),
      node('bin', 'split', { splt: '[0]', spltType: 'bin' }, [['bin-pieces', 'bin-join']]),
      node('bin-join', 'join', { mode: 'auto' }, [['bin-joined']]),
      node('stream', 'split', { splt: ',', spltType: 'str', stream: true }, [['stream-pieces']]),
      node('count', 'join', { mode: 'custom', build: 'string', joiner: '-', joinerType: 'str', count: '3', timeout: '' }, [['count-out']]),
      node('timeout', 'join', { mode: 'custom', build: 'array', count: '', timeout: '0.1', property: 'payload', propertyType: 'msg' }, [['timeout-out']]),
      node('kv', 'join', { mode: 'custom', build: 'object', key: 'topic', count: '2', accumulate: false }, [['kv-out']]),
      node('merged', 'join', { mode: 'custom', build: 'merged', count: '' }, [['merged-out']]),
      node('full', 'join', { mode: 'custom', build: 'array', propertyType: 'full', count: '2' }, [['full-out']]),
      node('buf', 'join', { mode: 'custom', build: 'buffer', joiner: '[44]', joinerType: 'bin', count: '2' }, [['buf-out']]),
      node('red-split', 'split', {}, [['red']]),
      node('red', 'join', reduce, [['red-out']]),
      node('right-split', 'split', {}, [['right']]),
      node('right', 'join', { mode: 'reduce', reduceExp: '$A & payload', reduceInit: '', reduceInitType: 'str', reduceRight: true }, [['right-out']]),
      node('prop-split', 'split', { property: 'data.list' }, [['prop-pieces', 'prop-join']]),
      node('prop-join', 'join', { mode: 'auto' }, [['prop-joined']]),
      ...['pieces', 'joined', 'obj-pieces', 'len-pieces', 'len-joined', 'bin-pieces', 'bin-joined', 'stream-pieces', 'count-out', 'timeout-out', 'kv-out',
        'merged-out', 'full-out', 'buf-out', 'red-out', 'right-out', 'prop-pieces', 'prop-joined'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('a string splits on the separator with Node-RED parts and joins back', async () => {
    receive('rt', { payload: 'a\nb\nc', topic: 't' });
    const pieces = await t.capture.waitFor('pieces', 3);
    assert.deepEqual(pieces.map(shape), ['a', 'b', 'c'].map((payload, index) => ({
      payload, topic: 't', parts: { id: 'string', type: 'string', ch: '\n', index, count: 3 },
    })));
    assert.equal(new Set(pieces.map((m) => m.parts.id)).size, 1);
    const [joined] = await t.capture.waitFor('joined');
    assert.deepEqual(shape(joined), { payload: 'a\nb\nc', topic: 't' });
  });

  test('arrays, objects and buffers round-trip through split and join', async () => {
    receive('rt', { payload: [1, { x: [2] }, 'three'] });
    receive('rt', { payload: { a: 1, b: [2, 3] } });
    receive('rt', { payload: Buffer.from('x\ny') });
    receive('rt', { payload: { outer: true }, parts: { id: 'outer', index: 4, count: 9, type: 'array' } });
    const joined = await t.capture.waitFor('joined', 5);
    assert.deepEqual(joined.slice(1).map(shape), [
      { payload: [1, { x: [2] }, 'three'] },
      { payload: { a: 1, b: [2, 3] } },
      { payload: Buffer.from('x\ny') },
      { payload: { outer: true }, parts: { id: 'string', index: 4, count: 9, type: 'array' } },
    ]);
  });

  test('object pieces carry their key in parts and in the addname property', async () => {
    receive('obj', { payload: { k1: 'v1', k2: 'v2' } });
    const pieces = await t.capture.waitFor('obj-pieces', 2);
    assert.deepEqual(pieces.map(shape), [
      { payload: 'v1', topic: 'k1', parts: { id: 'string', type: 'object', key: 'k1', index: 0, count: 2 } },
      { payload: 'v2', topic: 'k2', parts: { id: 'string', type: 'object', key: 'k2', index: 1, count: 2 } },
    ]);
  });

  test('fixed-length pieces of strings and arrays carry len and rejoin', async () => {
    receive('len', { payload: 'abcdefg' });
    receive('len', { payload: [1, 2, 3, 4, 5] });
    const pieces = await t.capture.waitFor('len-pieces', 6);
    assert.deepEqual(pieces.map(shape), [
      ...['abc', 'def', 'g'].map((payload, index) => ({ payload, parts: { id: 'string', type: 'string', ch: '', len: 3, count: 3, index } })),
      ...[[1, 2], [3, 4], [5]].map((payload, index) => ({ payload, parts: { id: 'string', type: 'array', count: 3, len: 2, index } })),
    ]);
    const joined = await t.capture.waitFor('len-joined', 2);
    assert.deepEqual(joined.map(shape), [{ payload: 'abcdefg' }, { payload: [1, 2, 3, 4, 5] }]);
  });

  test('a buffer splits on a byte sequence and joins back, a trailing separator included', async () => {
    receive('bin', { payload: Buffer.from([1, 0, 2, 0]) });
    const pieces = await t.capture.waitFor('bin-pieces', 3);
    assert.deepEqual(pieces.map((m) => [m.payload, m.parts.index, m.parts.count, m.parts.ch, m.parts.type]), [
      [Buffer.from([1]), 0, 3, [0], 'buffer'],
      [Buffer.from([2]), 1, 3, [0], 'buffer'],
      [Buffer.alloc(0), 2, 3, [0], 'buffer'],
    ]);
    const [joined] = await t.capture.waitFor('bin-joined');
    assert.deepEqual(joined.payload, Buffer.from([1, 0, 2, 0]));
  });

  test('stream mode carries the remainder into the next message and keeps counting', async () => {
    receive('stream', { payload: 'a,b,c' });
    receive('stream', { payload: 'd,e' });
    const pieces = await t.capture.waitFor('stream-pieces', 3);
    assert.deepEqual(pieces.map((m) => [m.payload, m.parts.index, m.parts.count]), [['a', 0, undefined], ['b', 1, undefined], ['cd', 2, undefined]]);
  });

  test('manual join by count builds a string with the joiner', async () => {
    for (const p of ['x', 'y', 'z']) receive('count', { payload: p, topic: p });
    const [out] = await t.capture.waitFor('count-out');
    assert.deepEqual(shape(out), { payload: 'x-y-z', topic: 'z' });
  });

  test('manual join sends what it has when the timeout expires', async () => {
    receive('timeout', { payload: 1 });
    receive('timeout', { payload: 2 });
    const [out] = await t.capture.waitFor('timeout-out', 1, 3000);
    assert.deepEqual(shape(out), { payload: [1, 2] });
  });

  test('a key/value object, msg.complete and msg.reset', async () => {
    receive('kv', { topic: 'a', payload: 1 });
    receive('kv', { topic: 'b', payload: 2 });
    const [first] = await t.capture.waitFor('kv-out');
    assert.deepEqual(shape(first), { topic: 'b', payload: { a: 1, b: 2 } });
    receive('merged', { payload: { a: 1 } });
    receive('merged', { payload: { b: 2 }, complete: true });
    receive('merged', { payload: { gone: 1 } });
    receive('merged', { reset: true });
    receive('merged', { payload: { c: 3 }, complete: true });
    const merged = await t.capture.waitFor('merged-out', 2);
    assert.deepEqual(merged.map(shape), [{ payload: { a: 1, b: 2 } }, { payload: { c: 3 } }]);
  });

  test('whole messages and buffers join manually', async () => {
    receive('full', { payload: 1, topic: 'a' });
    receive('full', { payload: 2, topic: 'b' });
    const [full] = await t.capture.waitFor('full-out');
    assert.deepEqual(full.payload.map(shape), [{ payload: 1, topic: 'a' }, { payload: 2, topic: 'b' }]);
    receive('buf', { payload: Buffer.from('ab') });
    receive('buf', { payload: 'cd' });
    const [buf] = await t.capture.waitFor('buf-out');
    assert.deepEqual(buf.payload, Buffer.from('ab,cd'));
  });

  test('a split of another property leaves the payload alone and an auto join rebuilds that property', async () => {
    t.receive('prop-split', { payload: 'kept', data: { list: ['a', 'b'], other: 1 } });
    const pieces = await t.capture.waitFor('prop-pieces', 2);
    assert.deepEqual(pieces.map(shape), [
      { payload: 'kept', data: { list: 'a', other: 1 }, parts: { id: 'string', property: 'data.list', type: 'array', count: 2, len: 1, index: 0 } },
      { payload: 'kept', data: { list: 'b', other: 1 }, parts: { id: 'string', property: 'data.list', type: 'array', count: 2, len: 1, index: 1 } },
    ]);
    const [joined] = await t.capture.waitFor('prop-joined');
    assert.deepEqual(joined.data, { list: ['a', 'b'], other: 1 });
    assert.equal(joined.payload, 'kept');
  });

  test('reduce folds a sequence with $A, $N and a fix-up, left and right', async () => {
    receive('red-split', { payload: [2, 4, 9] });
    const [avg] = await t.capture.waitFor('red-out');
    // As Node-RED, the result leaves on the last message in fold order (its parts, msg.res… kept).
    assert.deepEqual(shape(avg), { payload: 5, parts: { id: 'string', type: 'array', count: 3, len: 1, index: 2 } });
    receive('right-split', { payload: ['a', 'b', 'c'] });
    const [rev] = await t.capture.waitFor('right-out');
    assert.deepEqual(shape(rev), { payload: 'cba', parts: { id: 'string', type: 'array', count: 3, len: 1, index: 0 } });
  });
});

describe('join node timeouts and errors', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'join errors' },
    node('restart', 'join', { mode: 'custom', build: 'array', count: '', timeout: '0.6' }, [['restart-out']]),
    node('buf', 'join', { mode: 'custom', build: 'buffer', joiner: '', joinerType: 'str', count: '2' }, [['buf-out']]),
    node('red', 'join', { mode: 'reduce', reduceExp: '$A + payload', reduceInit: '0', reduceInitType: 'num' }, [['red-out']]),
    node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]),
    ...['restart-out', 'buf-out', 'red-out', 'errors'].map((id) => node(id, 'test-capture')),
  ], { nodeMessageBufferMaxLength: 2 });
  const errorsOf = (source: string) => t.capture.of('errors').filter((m) => m.error.source.id === source).map((m) => [m.error.message, m.payload]);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  test('msg.restartTimeout starts the group\'s timeout again', async () => {
    t.receive('restart', { payload: 'a' });
    await sleep(400);
    t.receive('restart', { payload: 'b', restartTimeout: true });
    await sleep(400);
    assert.equal(t.capture.of('restart-out').length, 0);
    const [out] = await t.capture.waitFor('restart-out');
    assert.deepEqual(out.payload, ['a', 'b']);
  });

  test('a value that cannot go into a buffer is reported with Node-RED\'s text', async () => {
    t.receive('buf', { payload: 5 });
    await t.capture.waitFor('errors');
    assert.deepEqual(errorsOf('buf'), [['Cannot join number to buffer', 5]]);
  });

  test('reduce mode over the buffer limit reports Node-RED\'s text', async () => {
    [1, 2, 3].forEach((index) => t.receive('red', { payload: index, parts: { id: 'r', index, count: 9 } }));
    await t.capture.waitFor('errors', 2);
    assert.deepEqual(errorsOf('red'), [['too many pending messages in join node', 3]]);
  });
});
