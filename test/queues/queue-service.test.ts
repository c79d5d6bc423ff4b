import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QueueService } from '../../src/queues/queue-service.js';
import { parseQueueSettings, type QueueSettings } from '../../src/settings/queues.js';
import type { QueueItem, QueueStore } from '../../src/storage/queue-contract.js';
import { captureLog } from '../helpers/log.js';

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
});
