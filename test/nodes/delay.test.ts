import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { node, type Conf, flowSuite } from './flow.js';
import { deploy } from '../helpers/deploy.js';

const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms));

/** Node-RED's delay defaults, as the editor writes them. */
const delay = (extra: Conf): Conf => ({
  pauseType: 'delay', timeout: '5', timeoutUnits: 'seconds', rate: '1', nbRateUnits: '1', rateUnits: 'second',
  randomFirst: '1', randomLast: '5', randomUnits: 'seconds', drop: false, allowrate: false, outputs: 1, ...extra,
});

describe('delay node', () => {
  const payloads = (name: string) => t.capture.of(name).map((m) => m.payload);
  const t = flowSuite(() => {
    const nodes: [string, Conf, number][] = [
      ['fixed', delay({ timeout: '20', timeoutUnits: 'milliseconds' }), 1],
      ['long', delay({ timeout: '1', timeoutUnits: 'seconds' }), 1],
      ['delayv', delay({ pauseType: 'delayv', timeout: '10', timeoutUnits: 'milliseconds' }), 1],
      ['random', delay({ pauseType: 'random', randomFirst: '5', randomLast: '15', randomUnits: 'milliseconds' }), 1],
      ['rate', delay({ pauseType: 'rate', rate: '50', rateUnits: 'second' }), 1],
      ['rate-slow', delay({ pauseType: 'rate', rate: '1', rateUnits: 'minute' }), 1],
      ['rate-drop', delay({ pauseType: 'rate', rate: '1', rateUnits: 'minute', drop: true, outputs: 2 }), 2],
      ['queue', delay({ pauseType: 'queue', rate: '20', rateUnits: 'second', outputs: 2 }), 2],
      ['timed', delay({ pauseType: 'timed', rate: '20', rateUnits: 'second' }), 1],
      ['burst', delay({ pauseType: 'burst', rate: '2', nbRateUnits: '1', rateUnits: 'minute', outputs: 2 }), 2],
      ['burst-1s', delay({ pauseType: 'burst', rate: '1', nbRateUnits: '1', rateUnits: 'second' }), 1],
    ];
    return [
      { id: 't1', type: 'tab', label: 'delay' },
      ...nodes.map(([id, conf, outputs]) => node(id, 'delay', conf, outputs === 2 ? [[`cap-${id}`], [`cap-${id}-2`]] : [[`cap-${id}`]])),
      ...nodes.flatMap(([id, , outputs]) => (outputs === 2 ? [`cap-${id}`, `cap-${id}-2`] : [`cap-${id}`]).map((c) => node(c, 'test-capture'))),
    ];
  });
  const { receive } = t;

  test('a fixed delay keeps order and content', async () => {
    receive('fixed', { _msgid: 'a', payload: 1 });
    receive('fixed', { _msgid: 'b', payload: 2 });
    assert.deepEqual(t.capture.of('cap-fixed'), []);
    assert.deepEqual(await t.capture.waitFor('cap-fixed', 2), [{ _msgid: 'a', payload: 1 }, { _msgid: 'b', payload: 2 }]);
  });

  test('flush releases held messages at once (a count releases the oldest); reset drops them', async () => {
    receive('long', { payload: 1 });
    receive('long', { payload: 2 });
    receive('long', { payload: 3 });
    receive('long', { flush: 1 });
    await t.capture.waitFor('cap-long', 1);
    receive('long', { flush: true });
    await t.capture.waitFor('cap-long', 3);
    assert.deepEqual(payloads('cap-long'), [1, 2, 3]);
    receive('long', { payload: 4 });
    receive('long', { reset: true });
    receive('long', { flush: true });
    await settle();
    assert.deepEqual(payloads('cap-long'), [1, 2, 3]);
  });

  test('delayv takes the delay from msg.delay', async () => {
    receive('delayv', { payload: 'slow', delay: 60 });
    receive('delayv', { payload: 'fast', delay: 1 });
    await t.capture.waitFor('cap-delayv', 2);
    assert.deepEqual(payloads('cap-delayv'), ['fast', 'slow']);
  });

  test('a random delay delivers every message', async () => {
    for (let i = 0; i < 5; i++) receive('random', { payload: i });
    const msgs = await t.capture.waitFor('cap-random', 5);
    assert.deepEqual(msgs.map((m) => m.payload).sort(), [0, 1, 2, 3, 4]);
  });

  test('a rate limit sends the first message at once and queues the rest in order', async () => {
    for (let i = 0; i < 4; i++) receive('rate', { payload: i });
    await t.capture.waitFor('cap-rate', 4);
    assert.deepEqual(payloads('cap-rate'), [0, 1, 2, 3]);
  });

  test('a queued rate limit releases on flush', async () => {
    receive('rate-slow', { payload: 'first' });
    receive('rate-slow', { payload: 'second' });
    receive('rate-slow', { payload: 'third' });
    await t.capture.waitFor('cap-rate-slow', 1);
    await settle();
    assert.deepEqual(payloads('cap-rate-slow'), ['first']);
    receive('rate-slow', { flush: true });
    await t.capture.waitFor('cap-rate-slow', 3);
    assert.deepEqual(payloads('cap-rate-slow'), ['first', 'second', 'third']);
  });

  test('dropping rate limit sends the excess to the second output', async () => {
    for (let i = 0; i < 3; i++) receive('rate-drop', { payload: i });
    await t.capture.waitFor('cap-rate-drop-2', 2);
    assert.deepEqual(payloads('cap-rate-drop'), [0]);
    assert.deepEqual(payloads('cap-rate-drop-2'), [1, 2]);
  });

  test('the topic queue keeps the newest message per topic, one released per interval', async () => {
    receive('queue', { topic: 'a', payload: 'a1' });
    receive('queue', { topic: 'b', payload: 'b1' });
    receive('queue', { topic: 'a', payload: 'a2' });
    receive('queue', { payload: 'none' });
    await t.capture.waitFor('cap-queue', 3);
    assert.deepEqual(t.capture.of('cap-queue').map((m) => [m.topic, m.payload]), [['a', 'a2'], ['b', 'b1'], ['_none_', 'none']]);
    assert.deepEqual(payloads('cap-queue-2'), ['a1']);
  });

  test('timed mode releases everything queued at each interval', async () => {
    receive('timed', { topic: 'x', payload: 1 });
    receive('timed', { topic: 'y', payload: 2 });
    await t.capture.waitFor('cap-timed', 2);
    assert.deepEqual(payloads('cap-timed'), [1, 2]);
  });

  test('burst mode passes the first rate messages of a window at once, sends the rest to the second output, and msg.reset opens the window again', async () => {
    for (const payload of [1, 2, 3, 4]) receive('burst', { payload });
    await t.capture.waitFor('cap-burst-2', 2);
    assert.deepEqual(payloads('cap-burst'), [1, 2]);
    assert.deepEqual(payloads('cap-burst-2'), [3, 4]);
    receive('burst', { reset: true });
    for (const payload of [5, 6, 7]) receive('burst', { payload });
    await t.capture.waitFor('cap-burst-2', 3);
    assert.deepEqual(payloads('cap-burst'), [1, 2, 5, 6]);
    assert.deepEqual(payloads('cap-burst-2'), [3, 4, 7]);
  });

  test('burst mode with one output drops the overflow, and each slot frees when its own window ends', async () => {
    receive('burst-1s', { payload: 'a' });
    receive('burst-1s', { payload: 'b' });
    await t.capture.waitFor('cap-burst-1s', 1);
    await settle(1100);
    receive('burst-1s', { payload: 'c' });
    await t.capture.waitFor('cap-burst-1s', 2);
    assert.deepEqual(payloads('cap-burst-1s'), ['a', 'c']);
  });

  test('redeploying discards held messages and stops every timer', async () => {
    receive('long', { payload: 'held' });
    // The flush above restarted the rate interval, so this waits in the queue.
    receive('rate-slow', { payload: 'queued' });
    await deploy(t.server, [{ id: 't1', type: 'tab', label: 'delay' }]);
    await settle(1100);
    assert.deepEqual(payloads('cap-long'), [1, 2, 3]);
    assert.deepEqual(payloads('cap-rate-slow'), ['first', 'second', 'third']);
  });
});
