import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { node, type Conf, flowSuite } from './flow.js';

const settle = (ms = 60) => new Promise((r) => setTimeout(r, ms));

/** Node-RED's trigger defaults, as the editor writes them. */
const trigger = (extra: Conf): Conf => ({
  op1: '1', op2: '0', op1type: 'str', op2type: 'str', duration: '30', extend: false, overrideDelay: false,
  units: 'ms', reset: '', bytopic: 'all', topic: 'topic', outputs: 1, ...extra,
});

describe('trigger node', () => {
  const payloads = (name: string) => t.capture.of(name).map((m) => m.payload);
  const t = flowSuite((server) => {
    server.instance.runtime.services.context.getFlowContext('t1').set('later', 'from-flow');
    const nodes: [string, Conf, number][] = [
      ['basic', trigger({}), 1],
      ['extend', trigger({ duration: '60', extend: true }), 1],
      ['original', trigger({ op1type: 'pay', op2type: 'nul' }), 1],
      ['wait', trigger({ duration: '0', reset: 'stop' }), 1],
      ['loop', trigger({ duration: '-15', op1: '{"tick":true}', op1type: 'json' }), 1],
      ['topics', trigger({ bytopic: 'topic', op1type: 'pay', op2: '{{topic}} done', op2type: 'str' }), 1],
      ['two', trigger({ op1: '5', op1type: 'num', op2: 'later', op2type: 'flow', outputs: 2 }), 2],
      ['override', trigger({ duration: '1', units: 's', overrideDelay: true, op2type: 'pay' }), 1],
      ['override-extend', trigger({ duration: '40', extend: true, overrideDelay: true }), 1],
      ['watched', trigger({ duration: '60', bytopic: 'topic' }), 1],
      ['stamp', trigger({ op1: '1', op1type: 'date', op2type: 'nul' }), 1],
    ];
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'trigger' },
      ...nodes.map(([id, conf, outputs]) => node(id, 'trigger', conf, outputs === 2 ? [[`cap-${id}`], [`cap-${id}-2`]] : [[`cap-${id}`]])),
      ...nodes.flatMap(([id, , outputs]) => (outputs === 2 ? [`cap-${id}`, `cap-${id}-2`] : [`cap-${id}`]).map((c) => node(c, 'test-capture'))),
      node('status-watched', 'status', { scope: ['watched'] }, [['cap-status']]),
      node('cap-status', 'test-capture'),
    ];
    return flows;
  });
  const { receive } = t;

  test('sends op1 at once and op2 after the duration; messages in between are ignored', async () => {
    receive('basic', { _msgid: 'b', payload: 'in', topic: 't' });
    receive('basic', { _msgid: 'ignored', payload: 'again' });
    assert.deepEqual(await t.capture.waitFor('cap-basic', 2), [
      { _msgid: 'b', payload: '1', topic: 't' },
      { _msgid: 'b', payload: '0', topic: 't' },
    ]);
    receive('basic', { _msgid: 'c', payload: 'next cycle' });
    await t.capture.waitFor('cap-basic', 4);
    assert.deepEqual(payloads('cap-basic'), ['1', '0', '1', '0']);
  });

  test('extend restarts the wait with every message', async () => {
    for (let i = 0; i < 3; i++) {
      receive('extend', { payload: i });
      await settle(25);
    }
    assert.deepEqual(payloads('cap-extend'), ['1']);
    await t.capture.waitFor('cap-extend', 2);
    assert.deepEqual(payloads('cap-extend'), ['1', '0']);
  });

  test('op1 "pay" sends the original message; op2 "nul" sends nothing later', async () => {
    receive('original', { _msgid: 'o', payload: { keep: true } });
    await settle(80);
    assert.deepEqual(t.capture.of('cap-original'), [{ _msgid: 'o', payload: { keep: true } }]);
  });

  test('duration 0 waits for a reset: msg.reset or the configured reset payload', async () => {
    receive('wait', { payload: 'a' });
    receive('wait', { payload: 'b' });
    await settle();
    assert.deepEqual(payloads('cap-wait'), ['1']);
    receive('wait', { payload: 'stop' });
    receive('wait', { payload: 'c' });
    receive('wait', { reset: true });
    receive('wait', { payload: 'd' });
    await settle();
    assert.deepEqual(payloads('cap-wait'), ['1', '1', '1']);
  });

  test('a negative duration repeats op1 until reset', async () => {
    receive('loop', { payload: 'go' });
    const msgs = await t.capture.waitFor('cap-loop', 3);
    assert.deepEqual(msgs[0].payload, { tick: true });
    assert.deepEqual(msgs[2].payload, { tick: true });
    receive('loop', { reset: true });
    await settle(30);
    const count = t.capture.of('cap-loop').length;
    await settle(60);
    assert.equal(t.capture.of('cap-loop').length, count);
  });

  test('by topic, each topic has its own cycle; op2 may be a mustache template', async () => {
    receive('topics', { topic: 'a', payload: 'A' });
    receive('topics', { topic: 'b', payload: 'B' });
    receive('topics', { topic: 'a', payload: 'A again' });
    await t.capture.waitFor('cap-topics', 4);
    assert.deepEqual(payloads('cap-topics'), ['A', 'B', 'a done', 'b done']);
  });

  test('with two outputs op2 leaves on the second, read from flow context when sent', async () => {
    receive('two', { _msgid: 'w', payload: 'x' });
    await t.capture.waitFor('cap-two');
    t.server.instance.runtime.services.context.getFlowContext('t1').set('later', 'changed');
    assert.deepEqual(await t.capture.waitFor('cap-two-2'), [{ _msgid: 'w', payload: 'changed' }]);
    assert.deepEqual(t.capture.of('cap-two'), [{ _msgid: 'w', payload: 5 }]);
  });

  test('overrideDelay takes the wait from msg.delay; op2 "pay" resends the original payload', async () => {
    receive('override', { payload: 'orig', delay: 20 });
    assert.deepEqual(payloads('cap-override'), []);
    await t.capture.waitFor('cap-override', 2);
    assert.deepEqual(payloads('cap-override'), ['1', 'orig']);
  });

  test('msg.delay holds for its own message: a later one extends by the configured duration', async () => {
    receive('override-extend', { payload: 'a', delay: 5000 });
    await settle(10);
    receive('override-extend', { payload: 'b' });
    assert.deepEqual((await t.capture.waitFor('cap-override-extend', 2, 1000)).map((m) => m.payload), ['1', '0']);
  });

  test('status: a dot while one topic waits, the count for more, cleared when none waits', async () => {
    receive('watched', { topic: 'a', payload: 1 });
    receive('watched', { topic: 'b', payload: 2 });
    await t.capture.waitFor('cap-watched', 4);
    await settle(20);
    const seen = t.capture.of('cap-status').map((m) => ({ fill: m.status.fill, shape: m.status.shape, text: m.status.text }));
    assert.deepEqual(seen, [
      { fill: 'blue', shape: 'dot', text: undefined },
      { fill: 'blue', shape: 'dot', text: '2' },
      { fill: 'blue', shape: 'dot', text: undefined },
      { fill: undefined, shape: undefined, text: undefined },
    ]);
  });

  test('op1 of type date with the editor\'s default value sends a timestamp', async () => {
    const before = Date.now();
    receive('stamp', { payload: 'x' });
    const [m] = await t.capture.waitFor('cap-stamp');
    assert.equal(typeof m.payload, 'number');
    assert.ok(m.payload >= before && m.payload <= Date.now());
  });
});
