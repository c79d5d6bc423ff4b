import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

describe('change node', () => {
  const t = flowSuite(() => {
    const rules = [
      { t: 'change', p: 'payload', pt: 'msg', from: 'cat', fromt: 'str', to: 'dog', tot: 'str' },
      { t: 'change', p: 'n', pt: 'msg', from: '5', fromt: 'num', to: '6', tot: 'num' },
      { t: 'set', p: 'topic', pt: 'msg', to: 'src.v', tot: 'msg' },
      { t: 'set', p: 'num', pt: 'msg', to: '7', tot: 'num' },
      { t: 'set', p: 'flag', pt: 'msg', to: 'true', tot: 'bool' },
      { t: 'set', p: 'obj', pt: 'msg', to: '{"k":[1]}', tot: 'json' },
      { t: 'set', p: 'deep.path.x', pt: 'msg', to: 'y', tot: 'str' },
      { t: 'set', p: 'who', pt: 'msg', to: 'WHO', tot: 'env' },
      { t: 'delete', p: 'remove', pt: 'msg' },
      { t: 'move', p: 'a', pt: 'msg', to: 'b', tot: 'msg' },
      { t: 'set', p: 'stored', pt: 'flow', to: 'payload', tot: 'msg' },
      { t: 'set', p: 'fromFlow', pt: 'msg', to: 'stored', tot: 'flow' },
      { t: 'set', p: 'expr', pt: 'msg', to: '$string(n) & "!"', tot: 'jsonata' },
      { t: 'change', p: 'topic', pt: 'msg', from: 'c(o)p', fromt: 're', to: 'C$1P', tot: 'str' },
      { t: 'set', p: 'missing', pt: 'msg', to: 'no.such.thing', tot: 'msg' },
    ];
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'change', env: [{ name: 'WHO', value: 'env-value', type: 'str' }] },
      node('rules', 'change', { rules }, [['cap-rules']]),
      node('legacy', 'change', { action: 'replace', property: 'payload', to: 'legacy' }, [['cap-legacy']]),
      node('fresh', 'change', { rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '{"list":[]}', tot: 'json' }] }, [['cap-fresh']]),
      node('move-up', 'change', { rules: [{ t: 'move', p: 'payload.inner', pt: 'msg', to: 'payload', tot: 'msg' }] }, [['cap-move-up']]),
      node('bad-rules', 'change', {
        rules: [
          { t: 'set', p: 'payload', pt: 'msg', to: '{oops', tot: 'json' },
          { t: 'change', p: 'payload', pt: 'msg', from: '(', fromt: 're', to: 'x', tot: 'str' },
          { t: 'set', p: 'payload', pt: 'msg', to: '$$$(', tot: 'jsonata' },
        ],
      }, [['cap-bad']]),
      node('note', 'comment', { info: 'comments deploy and do nothing' }),
      node('j', 'junction', {}, [['cap-j', 'cap-j2']]),
      ...['cap-rules', 'cap-legacy', 'cap-fresh', 'cap-move-up', 'cap-j', 'cap-j2', 'cap-bad'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('set, change, delete and move rules apply in order with every value type', async () => {
    receive('rules', { _msgid: 'm1', payload: 'cat and cat', n: 5, remove: 1, a: { x: 1 }, src: { v: 'copied' }, missing: 'kept' });
    const [msg] = await t.capture.waitFor('cap-rules');
    assert.deepEqual(msg, {
      _msgid: 'm1', payload: 'dog and dog', n: 6, topic: 'CoPied', num: 7, flag: true, obj: { k: [1] },
      deep: { path: { x: 'y' } }, who: 'env-value', b: { x: 1 }, src: { v: 'copied' }, fromFlow: 'dog and dog', expr: '6!', missing: 'kept',
    });
    assert.equal(t.server.instance.runtime.services.context.getFlowContext('t1').get('stored'), 'dog and dog');
  });

  test('the legacy single-rule form is migrated', async () => {
    receive('legacy', { _msgid: 'm2', payload: 'old' });
    assert.deepEqual(await t.capture.waitFor('cap-legacy'), [{ _msgid: 'm2', payload: 'legacy' }]);
  });

  test('a JSON value is a fresh object for every message', async () => {
    receive('fresh', { _msgid: 'f1' });
    const [first] = await t.capture.waitFor('cap-fresh');
    first.payload.list.push('mutated');
    receive('fresh', { _msgid: 'f2' });
    const [, second] = await t.capture.waitFor('cap-fresh', 2);
    assert.deepEqual(second, { _msgid: 'f2', payload: { list: [] } });
  });

  test('moving a child onto its parent goes through a temporary property', async () => {
    receive('move-up', { _msgid: 'mv', payload: { inner: { v: 1 }, other: 2 } });
    assert.deepEqual(await t.capture.waitFor('cap-move-up'), [{ _msgid: 'mv', payload: { v: 1 } }]);
  });

  test('a junction passes messages on unchanged to every wire', async () => {
    receive('j', { _msgid: 'j1', payload: { v: 1 } });
    assert.deepEqual(await t.capture.waitFor('cap-j'), [{ _msgid: 'j1', payload: { v: 1 } }]);
    assert.deepEqual(await t.capture.waitFor('cap-j2'), [{ _msgid: 'j1', payload: { v: 1 } }]);
  });

  test('each invalid rule is reported in Node-RED\'s words and the node passes nothing', async () => {
    const logs = t.server.logs.join('\n');
    assert.match(logs, /Invalid 'to' JSON property/);
    assert.match(logs, /Invalid 'from' property: Invalid regular expression/);
    assert.match(logs, /Invalid JSONata expression: /);
    receive('bad-rules', { _msgid: 'bad', payload: 1 });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(t.capture.of('cap-bad').length, 0);
  });
});
