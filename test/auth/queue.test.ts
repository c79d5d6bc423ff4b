import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from '../../src/auth/queue.js';

test('runs at most `concurrency` tasks at once, in order, and reports when full', async () => {
  const q = new WorkQueue(2, 3);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  const releases: Array<() => void> = [];
  const tasks = Array.from({ length: 5 }, (_, i) =>
    q.run(async () => {
      running++;
      peak = Math.max(peak, running);
      order.push(i);
      await new Promise<void>((r) => releases.push(r));
      running--;
      return i;
    }),
  );
  await new Promise((r) => setImmediate(r));
  assert.equal(running, 2);
  assert.equal(q.hasRoom(), false, 'three are waiting');
  while (order.length < 5 || releases.length > 0) {
    releases.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(await Promise.all(tasks), [0, 1, 2, 3, 4]);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.equal(peak, 2);
  assert.equal(q.hasRoom(), true);
});

test('a failing task frees its slot', async () => {
  const q = new WorkQueue(1, 10);
  await assert.rejects(q.run(async () => Promise.reject(new Error('boom'))), /boom/);
  assert.equal(await q.run(async () => 'next'), 'next');
});

test('an urgent task waits only behind the running ones and other urgent ones', async () => {
  const q = new WorkQueue(1, 10);
  const order: string[] = [];
  let release!: () => void;
  const first = q.run(() => new Promise<void>((r) => (release = r)));
  const tasks = [q.run(async () => order.push('plain 1')), q.run(async () => order.push('plain 2')), q.run(async () => order.push('urgent 1'), true), q.run(async () => order.push('urgent 2'), true)];
  release();
  await Promise.all([first, ...tasks]);
  assert.deepEqual(order, ['urgent 1', 'urgent 2', 'plain 1', 'plain 2']);
});

test('shed refuses the plain task that joined last, never an urgent one, and frees no slot', async () => {
  const q = new WorkQueue(1, 10);
  let release!: () => void;
  const first = q.run(() => new Promise<void>((r) => (release = r)));
  const ran: string[] = [];
  const early = q.run(async () => ran.push('early'));
  const late = q.run(async () => ran.push('late'));
  const urgent = q.run(async () => ran.push('urgent'), true);
  assert.equal(q.shed(new Error('crowded out')), true);
  await assert.rejects(late, /crowded out/);
  release();
  await Promise.all([first, early, urgent]);
  assert.deepEqual(ran, ['urgent', 'early']);
  assert.equal(q.shed(new Error('nobody')), false);
});
