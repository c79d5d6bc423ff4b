import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QueueService } from '../../src/queues/queue-service.js';
import { parseQueueSettings, type QueueSettings } from '../../src/settings/queues.js';
import type { QueueItem, QueueStore } from '../../src/storage/queue-contract.js';
import { captureLog } from '../helpers/log.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { FileQueueStore } from '../../src/storage/file/file-queues.js';

describe('queue service', () => {
  it('stores what a primary-only tab puts in batches of their own, fenced, in the order the messages were put', async () => {
    const stored: string[] = [];
    const store = {
      enqueue: async (_queue: string, items: QueueItem[], primaryOnly = false) => void stored.push(`${items.map((i) => i.id).join('+')} ${primaryOnly ? 'fenced' : 'open'}`),
      size: async () => ({ depth: 0, bytes: 0 }),
    } as unknown as QueueStore;
    const service = new QueueService(store, parseQueueSettings({}) as QueueSettings, captureLog().log);
    const bound = { maxLength: 100, maxBytes: 1_000_000, wait: false, open: () => true };
    const put = (id: string, primaryOnly: boolean) => service.put('jobs', { id, key: null, body: '{}' }, bound, primaryOnly);
    await Promise.all([put('a', false), put('b', false), put('c', true), put('d', false)]);
    assert.deepEqual(stored, ['a+b open', 'c fenced', 'd open']);
  });

  it('stores a message on a queue far from its bound without waiting for its depth to be read again', async () => {
    let clock = 0;
    let reads = 0;
    const stored: string[] = [];
    const store = {
      enqueue: async (_queue: string, items: QueueItem[]) => void stored.push(...items.map((i) => i.id)),
      // The first reading answers; later ones never do, as a slow count on a busy database.
      size: () => (reads++ === 0 ? Promise.resolve({ depth: 0, bytes: 0 }) : new Promise(() => {})),
    } as unknown as QueueStore;
    const service = new QueueService(store, parseQueueSettings({}) as QueueSettings, captureLog().log, () => clock);
    const bound = { maxLength: 100, maxBytes: 1_000_000, wait: false, open: () => true };
    await service.put('jobs', { id: 'a', key: null, body: '{}' }, bound);
    clock += 60_000;
    await service.put('jobs', { id: 'b', key: null, body: '{}' }, bound);
    assert.deepEqual(stored, ['a', 'b']);
    assert.equal(reads, 2, 'the stale depth is read again, in the background');
  });

  it('refuses a message only on a fresh reading of the depth', async () => {
    let clock = 0;
    let depth = 2;
    const store = {
      enqueue: async () => undefined,
      size: async () => ({ depth, bytes: 0 }),
    } as unknown as QueueStore;
    const service = new QueueService(store, parseQueueSettings({}) as QueueSettings, captureLog().log, () => clock);
    const bound = { maxLength: 2, maxBytes: 1_000_000, wait: false, open: () => true };
    await assert.rejects(service.put('jobs', { id: 'a', key: null, body: '{}' }, bound), /is full/);
    // Consumed meanwhile: the full reading is stale, so it is read again before refusing.
    depth = 0;
    clock += 60_000;
    await service.put('jobs', { id: 'b', key: null, body: '{}' }, bound);
  });

  it("hands a message put on an idle queue to this instance's consumer as it is stored, without a claim after it", async () => {
    const dir = await tempDir();
    const store = new FileQueueStore(dir);
    const claimedIds: string[] = [];
    const claim = store.claim.bind(store);
    store.claim = async (...args) => {
      const got = await claim(...args);
      claimedIds.push(...got.map((m) => m.id));
      return got;
    };
    const service = new QueueService(store, parseQueueSettings({}) as QueueSettings, captureLog().log);
    const handled: Array<{ id: string; attempts: number }> = [];
    let handledOne!: () => void;
    const one = new Promise<void>((resolve) => (handledOne = resolve));
    const consumer = service.consume('idle', 2, async (m) => {
      handled.push({ id: m.id, attempts: m.attempts });
      handledOne();
      return { ack: true };
    });
    try {
      await service.put('idle', { id: 'a', key: null, body: '{}' }, { maxLength: 100, maxBytes: 1_000_000, wait: false, open: () => true });
      await one;
      assert.deepEqual(handled, [{ id: 'a', attempts: 1 }]);
      assert.deepEqual(claimedIds, [], 'no claim brought it');
    } finally {
      await consumer.stop(1000);
      await store.close();
      await removeDir(dir);
    }
  });
});
