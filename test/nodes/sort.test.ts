import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

describe('sort node', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'sort' },
      node('elems', 'sort', { target: 'payload', targetType: 'msg', msgKey: 'payload', msgKeyType: 'elem', order: 'ascending', as_num: false }, [['cap-elems']]),
      node('nums', 'sort', { target: 'data', targetType: 'msg', msgKeyType: 'elem', order: 'descending', as_num: true }, [['cap-nums']]),
      node('by-exp', 'sort', { target: 'payload', targetType: 'msg', msgKey: 'age', msgKeyType: 'jsonata', order: 'ascending' }, [['cap-by-exp']]),
      node('seq', 'sort', { target: '', targetType: 'seq', seqKey: 'payload', seqKeyType: 'msg', order: 'ascending', as_num: true }, [['cap-seq']]),
      node('seq-exp', 'sort', { targetType: 'seq', seqKey: '$length(payload)', seqKeyType: 'jsonata', order: 'descending' }, [['cap-seq-exp']]),
      ...['cap-elems', 'cap-nums', 'cap-by-exp', 'cap-seq', 'cap-seq-exp'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('an array property is sorted by its elements; non-arrays are not sent', async () => {
    receive('elems', { _msgid: 'x', payload: 'not an array' });
    receive('elems', { _msgid: 'a', payload: ['pear', 'apple', 'fig'] });
    assert.deepEqual(await t.capture.waitFor('cap-elems'), [{ _msgid: 'a', payload: ['apple', 'fig', 'pear'] }]);
  });

  test('as_num compares as numbers, descending', async () => {
    receive('nums', { _msgid: 'n', data: ['9', '10', '1'] });
    assert.deepEqual(await t.capture.waitFor('cap-nums'), [{ _msgid: 'n', data: ['10', '9', '1'] }]);
  });

  test('a JSONata key is evaluated per element', async () => {
    receive('by-exp', { _msgid: 'e', payload: [{ n: 'a', age: 30 }, { n: 'b', age: 20 }] });
    assert.deepEqual(await t.capture.waitFor('cap-by-exp'), [{ _msgid: 'e', payload: [{ n: 'b', age: 20 }, { n: 'a', age: 30 }] }]);
  });

  test('a message sequence is collected, sorted and renumbered', async () => {
    const payloads = ['3', '10', '1'];
    payloads.forEach((payload, index) => receive('seq', { _msgid: `s${index}`, payload, parts: { id: 'g', index, count: 3 } }));
    receive('seq', { _msgid: 'loose', payload: '0' });
    const msgs = await t.capture.waitFor('cap-seq', 3);
    assert.deepEqual(msgs, [
      { _msgid: 's2', payload: '1', parts: { id: 'g', index: 0, count: 3 } },
      { _msgid: 's0', payload: '3', parts: { id: 'g', index: 1, count: 3 } },
      { _msgid: 's1', payload: '10', parts: { id: 'g', index: 2, count: 3 } },
    ]);
  });

  test('a sequence sorts by a JSONata key; count may come with the last message only', async () => {
    receive('seq-exp', { _msgid: 'q0', payload: 'bb', parts: { id: 'h', index: 0 } });
    receive('seq-exp', { _msgid: 'q1', payload: 'ccc', parts: { id: 'h', index: 1 } });
    receive('seq-exp', { _msgid: 'q2', payload: 'a', parts: { id: 'h', index: 2, count: 3 } });
    const msgs = await t.capture.waitFor('cap-seq-exp', 3);
    assert.deepEqual(msgs.map((m) => [m._msgid, m.parts.index]), [['q1', 0], ['q0', 1], ['q2', 2]]);
  });
});

describe('sort node errors', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'sort errors' },
    node('seq', 'sort', { targetType: 'seq', seqKey: 'payload', seqKeyType: 'msg', order: 'ascending' }, [['cap-seq']]),
    node('exp', 'sort', { target: 'payload', targetType: 'msg', msgKey: '$number($)', msgKeyType: 'jsonata', order: 'ascending' }, [['cap-exp']]),
    node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]),
    ...['cap-seq', 'cap-exp', 'errors'].map((id) => node(id, 'test-capture')),
  ], { nodeMessageBufferMaxLength: 2 });
  const errorsOf = (source: string) => t.capture.of('errors').filter((m) => m.error.source.id === source);

  test('over the buffer limit the oldest sequence goes, with Node-RED\'s text on its last message', async () => {
    [0, 1, 2].forEach((index) => t.receive('seq', { payload: index, parts: { id: 'g', index, count: 5 } }));
    await t.capture.waitFor('errors');
    assert.deepEqual(errorsOf('seq').map((m) => [m.error.message, m.payload]), [['Too many pending messages in sort node', 2]]);
  });

  test('a failing JSONata key is reported with Node-RED\'s prefix', async () => {
    t.receive('exp', { payload: ['1', 'x'] });
    await t.capture.waitFor('errors', 2);
    const [err] = errorsOf('exp');
    assert.match(err.error.message, /^Invalid JSONata expression in sort node: \S/);
    assert.equal(t.capture.of('cap-exp').length, 0);
  });
});
