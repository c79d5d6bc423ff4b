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

  test('a Buffer is parsed like a string; unsupported types are dropped with Node-RED\'s warning', async () => {
    const before = t.capture.of('cap-toggle').length;
    receive('toggle', { _msgid: 'fn', payload: Symbol('s') });
    receive('toggle', { _msgid: 'buf', payload: Buffer.from('{"b":1}') });
    const got = await t.capture.waitFor('cap-toggle', before + 1);
    assert.deepEqual(got.slice(before), [{ _msgid: 'buf', payload: { b: 1 } }]);
    assert.ok(t.server.logs.some((l) => l.includes('Ignored unsupported payload type')));
  });
});

const SCHEMA = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'string', maxLength: 2 } }, required: ['a'] };

describe('json node with msg.schema', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'json schema' },
    node('toggle', 'json', { action: '', property: 'payload' }, [['out']]),
    node('str', 'json', { action: 'str', property: 'payload' }, [['out']]),
    node('obj', 'json', { action: 'obj', property: 'payload' }, [['out']]),
    node('catch', 'catch', { scope: null, uncaught: false }, [['out']]),
    node('out', 'test-capture'),
  ]);

  /** Sends `msg` to node `id` and returns what reached `out`: the message sent or the error caught. */
  async function through(id: string, msg: Record<string, unknown>): Promise<Record<string, any>> {
    const n = t.capture.of('out').length;
    t.receive(id, msg);
    return (await t.capture.waitFor('out', n + 1))[n];
  }

  test('a valid message is converted and leaves without msg.schema, in every direction', async () => {
    assert.deepEqual(await through('toggle', { _msgid: 'v1', payload: '{"a":1,"b":"ok"}', schema: SCHEMA }), { _msgid: 'v1', payload: { a: 1, b: 'ok' } });
    assert.deepEqual(await through('toggle', { _msgid: 'v2', payload: { a: 2 }, schema: SCHEMA }), { _msgid: 'v2', payload: '{"a":2}' });
    assert.deepEqual(await through('str', { _msgid: 'v3', payload: '{"a":3}', schema: SCHEMA }), { _msgid: 'v3', payload: '{"a":3}' });
    assert.deepEqual(await through('obj', { _msgid: 'v4', payload: { a: 4 }, schema: SCHEMA }), { _msgid: 'v4', payload: { a: 4 } });
  });

  test('an invalid message fails with ajv\'s error text and keeps its errors in msg.schemaError', async () => {
    const msg = await through('toggle', { _msgid: 'i1', payload: '{"a":"x","b":"long"}', schema: SCHEMA });
    assert.equal(msg.error.message, 'JSON Schema error: data/a must be number, data/b must NOT have more than 2 characters');
    assert.deepEqual(msg.payload, { a: 'x', b: 'long' });
    assert.deepEqual(msg.schema, SCHEMA);
    assert.deepEqual(msg.schemaError, [
      { instancePath: '/a', schemaPath: '#/properties/a/type', keyword: 'type', params: { type: 'number' }, message: 'must be number' },
      { instancePath: '/b', schemaPath: '#/properties/b/maxLength', keyword: 'maxLength', params: { limit: 2 }, message: 'must NOT have more than 2 characters' },
    ]);
    const str = await through('str', { _msgid: 'i2', payload: { b: 7 }, schema: SCHEMA });
    assert.equal(str.error.message, "JSON Schema error: data must have required property 'a', data/b must be string");
    assert.deepEqual(str.payload, { b: 7 });
  });

  test('a string that is not JSON, checked against a schema in "always string" mode, fails with the parser\'s message', async () => {
    const msg = await through('str', { _msgid: 'p1', payload: 'not json', schema: SCHEMA });
    const parserMessage = (() => {
      try {
        JSON.parse('not json');
      } catch (e) {
        return (e as Error).message;
      }
    })();
    assert.equal(msg.error.message, parserMessage, 'the message alone, not "SyntaxError: …" as a thrown error gives');
    assert.equal(msg.error.source.id, 'str');
    assert.equal(msg.payload, 'not json');
  });

  test('a draft-06 schema validates; a schema ajv cannot compile is an error', async () => {
    const draft06 = { $schema: 'http://json-schema.org/draft-06/schema#', type: 'array', contains: { const: 3 } };
    assert.deepEqual(await through('obj', { _msgid: 'd1', payload: [1, 3], schema: draft06 }), { _msgid: 'd1', payload: [1, 3] });
    const bad = await through('obj', { _msgid: 'd2', payload: [1], schema: { type: 'nonsense' } });
    assert.equal(bad.error.message, 'JSON Schema error: failed to compile schema');
    assert.equal(bad.schemaError, undefined);
  });

  test('a schema is compiled once per JSON text, so an $id schema sent again as a new object still works', async () => {
    const withId = () => ({ $id: 'urn:runnel:test', type: 'integer' });
    assert.deepEqual(await through('toggle', { _msgid: 'c1', payload: '5', schema: withId() }), { _msgid: 'c1', payload: 5 });
    assert.deepEqual(await through('toggle', { _msgid: 'c2', payload: '6', schema: withId() }), { _msgid: 'c2', payload: 6 });
  });
});
