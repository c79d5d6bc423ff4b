import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

describe('json node', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'json' },
      node('toggle', 'json', { action: '', property: 'payload' }, [['cap-toggle']]),
      node('pretty', 'json', { action: 'str', pretty: true, property: 'data.v' }, [['cap-pretty']]),
      node('obj', 'json', { action: 'obj' }, [['cap-obj']]),
      node('catch', 'catch', { scope: ['toggle'], uncaught: false }, [['cap-catch']]),
      ...['cap-toggle', 'cap-pretty', 'cap-obj', 'cap-catch'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('the default action converts each way', async () => {
    receive('toggle', { _msgid: 'a', payload: '{"a":[1,true]}' });
    receive('toggle', { _msgid: 'b', payload: { b: 'x' } });
    receive('toggle', { _msgid: 'c', payload: 5 });
    receive('toggle', { _msgid: 'd', topic: 'no payload' });
    assert.deepEqual(await t.capture.waitFor('cap-toggle', 4), [
      { _msgid: 'a', payload: { a: [1, true] } },
      { _msgid: 'b', payload: '{"b":"x"}' },
      { _msgid: 'c', payload: '5' },
      { _msgid: 'd', topic: 'no payload' },
    ]);
  });

  test('"str" always gives a string, indented when pretty, on a nested property', async () => {
    receive('pretty', { _msgid: 'p1', data: { v: { k: 1 } } });
    receive('pretty', { _msgid: 'p2', data: { v: '{"left":"alone"}' } });
    assert.deepEqual(await t.capture.waitFor('cap-pretty', 2), [
      { _msgid: 'p1', data: { v: '{\n    "k": 1\n}' } },
      { _msgid: 'p2', data: { v: '{"left":"alone"}' } },
    ]);
  });

  test('"obj" leaves values alone and parses strings', async () => {
    receive('obj', { _msgid: 'o1', payload: { k: 1 } });
    receive('obj', { _msgid: 'o2', payload: '[1,2]' });
    assert.deepEqual(await t.capture.waitFor('cap-obj', 2), [{ _msgid: 'o1', payload: { k: 1 } }, { _msgid: 'o2', payload: [1, 2] }]);
  });

  test('invalid JSON is an error for catch nodes and nothing is sent', async () => {
    const before = t.capture.of('cap-toggle').length;
    receive('toggle', { _msgid: 'bad', payload: '{not json' });
    const [msg] = await t.capture.waitFor('cap-catch');
    assert.equal(msg._msgid, 'bad');
    assert.equal(msg.payload, '{not json');
    assert.equal(msg.error.source.id, 'toggle');
    assert.match(msg.error.message, /JSON/);
    assert.equal(t.capture.of('cap-toggle').length, before);
  });

  test('Buffers and unsupported types are dropped with Node-RED\'s warnings', async () => {
    const before = t.capture.of('cap-toggle').length;
    receive('toggle', { _msgid: 'buf', payload: Buffer.from('{}') });
    receive('toggle', { _msgid: 'fn', payload: Symbol('s') });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(t.capture.of('cap-toggle').length, before);
    assert.ok(t.server.logs.some((l) => l.includes('Ignored non-object payload')));
    assert.ok(t.server.logs.some((l) => l.includes('Ignored unsupported payload type')));
  });
});
