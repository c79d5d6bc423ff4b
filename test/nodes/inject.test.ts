import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { node, type Conf, flowSuite } from './flow.js';
import { deploy } from '../helpers/deploy.js';

describe('inject node', () => {
  const t = flowSuite((server) => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'inject', env: [{ name: 'WHO', value: 'tab', type: 'str' }] },
      node('props', 'inject', {
        props: [
          { p: 'payload', v: '{"a":[1,2]}', vt: 'json' },
          { p: 'topic', v: 'news', vt: 'str' },
          { p: 'n', v: '42', vt: 'num' },
          { p: 'flag', v: 'true', vt: 'bool' },
          { p: 'who', v: 'WHO', vt: 'env' },
          { p: 'deep.buf', v: '[1,2,3]', vt: 'bin' },
          { p: 'sum', v: '1 + 2', vt: 'jsonata' },
          { p: 'stamp', v: '', vt: 'date' },
          { p: 'g', v: 'seed', vt: 'global' },
        ],
        once: true, onceDelay: 0,
      }, [['cap-props']]),
      node('legacy', 'inject', { payload: 'hello', payloadType: 'str', topic: 'old', once: true, onceDelay: 0.01 }, [['cap-legacy']]),
      node('repeat', 'inject', { props: [{ p: 'payload', v: 'r', vt: 'str' }], repeat: '0.05' }, [['cap-repeat']]),
      node('manual', 'inject', { props: [{ p: 'payload', v: 'm', vt: 'str' }], repeat: '' }, [['cap-manual']]),
      node('cron', 'inject', { props: [{ p: 'payload' }], crontab: 'not a cron' }, [[]]),
      node('bad', 'inject', {
        props: [
          { p: 'payload', v: 'not json', vt: 'json' },
          { p: 'empty', v: '', vt: 'jsonata' },
          { p: 'call', v: '$nope()', vt: 'jsonata' },
          { p: 'broken', v: '1 +', vt: 'jsonata' },
        ],
        repeat: '',
      }, [['cap-bad']]),
      node('catch-bad', 'catch', { scope: ['bad'], uncaught: false }, [['cap-bad-errors']]),
      ...['cap-props', 'cap-legacy', 'cap-repeat', 'cap-manual', 'cap-bad', 'cap-bad-errors'].map((id) => node(id, 'test-capture')),
    ];
    server.instance.runtime.services.context.getGlobalContext().set('seed', 'from-global');
    return flows;
  });

  test('once injects every typed property', async () => {
    const before = Date.now();
    const [msg] = await t.capture.waitFor('cap-props');
    assert.equal(typeof msg._msgid, 'string');
    assert.ok(msg.stamp <= Date.now() && msg.stamp >= before - 5000);
    const { _msgid, stamp, ...rest } = msg;
    assert.deepEqual(rest, {
      payload: { a: [1, 2] }, topic: 'news', n: 42, flag: true, who: 'tab',
      deep: { buf: Buffer.from([1, 2, 3]) }, sum: 3, g: 'from-global',
    });
  });

  test('bad JSON and JSONata values fail each injection with Node-RED\'s texts; an empty expression sets nothing', async () => {
    t.receive('bad', { _msgid: 'b1' });
    const [caught] = await t.capture.waitFor('cap-bad-errors');
    assert.equal(caught.error.message, [
      `SyntaxError: Unexpected token 'o', "not json" is not valid JSON`,
      'Invalid JSONata expression: Attempted to invoke a non-function',
      'Unexpected end of expression',
    ].join('; '));
    assert.equal(caught.empty, undefined);
    assert.deepEqual(t.capture.of('cap-bad'), []);
  });

  test('the legacy payload/topic form still works', async () => {
    const [msg] = await t.capture.waitFor('cap-legacy');
    assert.deepEqual({ payload: msg.payload, topic: msg.topic }, { payload: 'hello', topic: 'old' });
  });

  test('repeat injects on an interval and stops when the node is removed', async () => {
    await t.capture.waitFor('cap-repeat', 3);
    await deploy(t.server, [{ id: 't1', type: 'tab', label: 'inject' }, node('cap-repeat', 'test-capture')]);
    const count = t.capture.of('cap-repeat').length;
    await new Promise((res) => setTimeout(res, 200));
    assert.equal(t.capture.of('cap-repeat').length, count);
  });

  test('an unsupported crontab is reported and nothing is injected without a trigger', async () => {
    assert.ok(t.server.logs.some((l) => l.includes('not a cron') && l.includes('is not supported (expected 5 or 6 fields, got 3)')));
    assert.deepEqual(t.capture.of('cap-manual'), []);
  });
});

describe('inject node receive', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'x' },
    node('manual', 'inject', { props: [{ p: 'payload', v: 'm', vt: 'str' }, { p: 'topic', vt: 'str' }], topic: 't' }, [['cap-manual']]),
    node('cron', 'inject', { props: [{ p: 'payload', v: 'c', vt: 'str' }], crontab: '*/1 * * * * *' }, [['cap-cron']]),
    node('cap-manual', 'test-capture'),
    node('cap-cron', 'test-capture'),
  ]);

  test('node.receive({}) injects the configured properties', async () => {
    t.receive('manual', { _msgid: 'x1' });
    assert.deepEqual(await t.capture.waitFor('cap-manual'), [{ _msgid: 'x1', payload: 'm', topic: 't' }]);
  });

  test('a six-field crontab fires every second', async () => {
    const [a, b] = await t.capture.waitFor('cap-cron', 2, 4000);
    assert.deepEqual([a.payload, b.payload], ['c', 'c']);
  });
});
