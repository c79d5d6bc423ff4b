import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SerialQueue } from '../../src/base/serial-queue.js';

describe('SerialQueue', () => {
  it('runs tasks one at a time in arrival order', async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    let running = 0;
    const task = (name: string, ticks: number) => async () => {
      running++;
      assert.equal(running, 1, 'two tasks overlapped');
      for (let i = 0; i < ticks; i++) await new Promise((r) => setImmediate(r));
      log.push(name);
      running--;
      return name;
    };
    const results = await Promise.all([queue.run(task('a', 3)), queue.run(task('b', 0)), queue.run(task('c', 1))]);
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.deepEqual(log, ['a', 'b', 'c']);
  });

  it('keeps going after a failed task, which still rejects its own caller', async () => {
    const queue = new SerialQueue();
    const failed = queue.run(async () => {
      throw new Error('boom');
    });
    const next = queue.run(async () => 'next');
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'next');
  });

  it('drain() waits for every task queued so far, failed ones included', async () => {
    const queue = new SerialQueue();
    const done: number[] = [];
    void queue.run(async () => {
      await new Promise((r) => setTimeout(r, 5));
      done.push(1);
    });
    queue.run(async () => {
      done.push(2);
      throw new Error('ignored');
    }).catch(() => undefined);
    await queue.drain();
    assert.deepEqual(done, [1, 2]);
  });
});
