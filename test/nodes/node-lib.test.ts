import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { promisify } from 'node:util';
import { NodeTimers } from '../../src/nodes/lib/node-timers.js';
import { SequenceGroups } from '../../src/nodes/lib/sequence-groups.js';
import type { Held } from '../../src/nodes/lib/held.js';

describe('NodeTimers', () => {
  test('promisified setTimeout resolves with the value through a tracked timer', async () => {
    const timers = new NodeTimers((fn, args) => fn(...args));
    const wait = promisify(timers.setTimeout) as unknown as (ms: number, value: string) => Promise<string>;
    assert.equal(await wait(5, 'later'), 'later');
  });

  test('clearAll stops timeouts and intervals the code left running', async () => {
    const calls: string[] = [];
    const timers = new NodeTimers((fn, args) => fn(...args));
    timers.setTimeout(() => calls.push('timeout'), 20);
    timers.setInterval(() => calls.push('interval'), 10);
    timers.clearAll();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(calls, []);
  });
});

describe('SequenceGroups', () => {
  const held = (id: number): Held => ({ msg: { id }, send: () => {}, done: () => {} });

  test('a sequence is complete when its count has arrived; the first count given stands', () => {
    const groups = new SequenceGroups(false);
    const [a, b, c] = [held(1), held(2), held(3)];
    assert.equal(groups.add('s', a, undefined), false);
    assert.equal(groups.add('s', b, 3), false);
    assert.equal(groups.add('s', c, 2), true);
    assert.equal(groups.size, 3);
    assert.deepEqual(groups.take('s'), [a, b, c]);
    assert.equal(groups.size, 0);
  });

  test('with latestCountWins a later count replaces the known one', () => {
    const groups = new SequenceGroups(true);
    groups.add('s', held(1), 3);
    assert.equal(groups.add('s', held(2), 2), true);
  });

  test('the oldest sequence is offered only when complete; drain empties every sequence', () => {
    const groups = new SequenceGroups(false);
    const first = held(1);
    groups.add('old', first, 2);
    groups.add('new', held(2), 1);
    assert.equal(groups.oldestComplete(), undefined);
    groups.add('old', held(3), undefined);
    assert.equal(groups.oldestComplete()?.[0], first);
    assert.equal(groups.takeOldest().length, 2);
    assert.equal(groups.drain().length, 1);
    assert.equal(groups.size, 0);
    assert.deepEqual(groups.takeOldest(), []);
  });
});
