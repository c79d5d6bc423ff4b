import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

describe('yaml node', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'yaml' },
      node('y', 'yaml', { property: '' }, [['y-out']]),
      node('prop', 'yaml', { property: 'data' }, [['prop-out']]),
      node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]),
      ...['y-out', 'prop-out', 'errors'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('YAML text becomes an object and an object becomes YAML text', async () => {
    receive('y', { _msgid: 'a', payload: 'name: runnel\nlist:\n  - 1\n  - two\nnested:\n  ok: true\n' });
    receive('y', { _msgid: 'b', payload: { name: 'runnel', list: [1, 'two'] } });
    receive('y', { _msgid: 'c' });
    const out = await t.capture.waitFor('y-out', 3);
    assert.deepEqual(out, [
      { _msgid: 'a', payload: { name: 'runnel', list: [1, 'two'], nested: { ok: true } } },
      { _msgid: 'b', payload: 'name: runnel\nlist:\n  - 1\n  - two\n' },
      { _msgid: 'c' },
    ]);
  });

  test('another property converts in place; invalid YAML is reported to catch nodes', async () => {
    receive('prop', { _msgid: 'd', data: '[1, 2]', payload: 'untouched' });
    assert.deepEqual(await t.capture.waitFor('prop-out'), [{ _msgid: 'd', data: [1, 2], payload: 'untouched' }]);
    receive('y', { _msgid: 'e', payload: 'a: [unclosed' });
    const [err] = await t.capture.waitFor('errors');
    assert.equal(err._msgid, 'e');
    assert.equal(err.error.source.id, 'y');
    assert.match(err.error.message, /unexpected end of the stream/);
  });

  test('null becomes YAML text; Buffers and other types are dropped with Node-RED\'s warnings', async () => {
    receive('y', { _msgid: 'n', payload: null });
    receive('y', { _msgid: 'buf', payload: Buffer.from('a: 1') });
    receive('y', { _msgid: 'num', payload: 5 });
    const out = await t.capture.waitFor('y-out', 4);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(out.slice(3), [{ _msgid: 'n', payload: 'null\n' }]);
    assert.ok(t.server.logs.some((l) => l.includes('Ignored non-object payload')));
    assert.ok(t.server.logs.some((l) => l.includes('Ignored unsupported payload type')));
  });
});
