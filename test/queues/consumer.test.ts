import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Consumer } from '../../src/queues/consumer.js';
import { FileQueueStore } from '../../src/storage/file/file-queues.js';
import type { ClaimedMessage } from '../../src/storage/queue-contract.js';
import { captureLog } from '../helpers/log.js';
import { tempDir } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';

/** A file queue store whose claims wait until the test lets them through. */
class GatedStore extends FileQueueStore {
  private open: () => void = () => undefined;
  private gate = new Promise<void>((resolve) => {
    this.open = resolve;
  });
  claimsStarted = 0;

  letClaimsThrough(): void {
    this.open();
  }

  override async claim(queue: string, max: number, leaseMs: number): Promise<ClaimedMessage[]> {
    this.claimsStarted++;
    await this.gate;
    return super.claim(queue, max, leaseMs);
  }
}

describe('queue consumer', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await removeDir(d);
  });

  it('gives back what a claim under way at stop brings, instead of handling it after stopping', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const store = new GatedStore(path.join(dir, 'queues'));
    await store.enqueue('q', [{ id: 'a', key: null, body: '{}' }]);
    const handled: string[] = [];
    const consumer = new Consumer(store, 'q', { concurrency: 2, leaseMs: 60_000, pollMs: 60_000 }, async (m) => {
      handled.push(m.id);
      return { ack: true };
    }, captureLog().log);
    assert.equal(store.claimsStarted, 1, 'the consumer claims as it starts');
    const stopped = consumer.stop(1000);
    store.letClaimsThrough();
    await stopped;
    assert.deepEqual(handled, [], 'nothing is handled once stop was called');
    const [q] = await store.list([]);
    assert.deepEqual([q.depth, q.inFlight], [1, 0], 'the message is stored and claimable again');
    const [again] = await store.claim('q', 1, 60_000);
    assert.equal(again.id, 'a');
    await store.close();
  });
});
