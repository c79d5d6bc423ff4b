import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { opener, type StorageBackend } from './contract.js';
import type { QueueItem } from '../../src/storage/queue-contract.js';

/**
 * The durable queue contract (src/storage/queue-contract.ts), run against each backend's
 * `storage.queues`. A lease of 0 ms lapses at once and one of a minute holds for the test, so no
 * test waits for time to pass.
 */

const HOLD = 60_000;
const LAPSE = 0;

const item = (id: string, key: string | null = null): QueueItem => ({ id, key, body: JSON.stringify({ payload: id }) });

export function queueContract(backend: StorageBackend): void {
  describe(`Queue contract: ${backend.name}`, { timeout: 60_000 }, () => {
    const openStorage = opener(backend);
    const open = async (place?: string) => {
      const opened = await openStorage(place);
      return { ...opened, queues: opened.storage.queues };
    };

    it('hands out messages in the order they were enqueued, and forgets them once acknowledged', async () => {
      const { queues } = await open();
      await queues.enqueue('orders', [item('a'), item('b')]);
      await queues.enqueue('orders', [item('c')]);
      const first = await queues.claim('orders', 10, HOLD);
      assert.deepEqual(first.map((m) => [m.id, m.attempts, JSON.parse(m.body).payload]), [['a', 1, 'a'], ['b', 1, 'b'], ['c', 1, 'c']]);
      assert.deepEqual(await queues.claim('orders', 10, HOLD), [], 'claimed messages are not handed out twice');
      await queues.ack('orders', [first[0].seq, first[1].seq]);
      const [depth] = await queues.list([]);
      assert.equal(depth.name, 'orders');
      assert.equal(depth.depth, 1);
      assert.equal(depth.inFlight, 1);
      assert.ok(depth.bytes > 0 && depth.oldest !== null);
    });

    it('hands off up to `max` messages without a key to the enqueuer as claims; nobody else gets them while the claim holds', async () => {
      const { queues } = await open();
      const handed = await queues.enqueue('h', [item('k1', 'alice'), item('n1'), item('n2'), item('n3')], false, { max: 2, leaseMs: HOLD });
      assert.deepEqual(handed.map((m) => [m.id, m.attempts, JSON.parse(m.body).payload]), [['n1', 1, 'n1'], ['n2', 1, 'n2']]);
      assert.deepEqual((await queues.claim('h', 10, HOLD)).map((m) => m.id), ['k1', 'n3'], 'a key is never handed off; the rest is claimable');
      const [depth] = await queues.list([]);
      assert.equal(depth.inFlight, 4);
      await queues.ack('h', handed.map((m) => m.seq));
      assert.deepEqual(await queues.enqueue('h', [item('n4')]), [], 'no hand-off unless asked');
      const lapsing = await queues.enqueue('l', [item('l1')], false, { max: 1, leaseMs: LAPSE });
      const again = await queues.claim('l', 10, HOLD);
      assert.deepEqual(again.map((m) => [m.id, m.attempts, m.seq]), [['l1', 2, lapsing[0].seq]], 'a lapsed hand-off is a further attempt');
    });

    it('claims at most `max`, and keeps queues apart', async () => {
      const { queues } = await open();
      await queues.enqueue('a', [item('1'), item('2'), item('3')]);
      await queues.enqueue('b', [item('x')]);
      assert.deepEqual((await queues.claim('a', 2, HOLD)).map((m) => m.id), ['1', '2']);
      assert.deepEqual((await queues.claim('b', 5, HOLD)).map((m) => m.id), ['x']);
      assert.deepEqual((await queues.claim('a', 5, HOLD)).map((m) => m.id), ['3']);
    });

    it('hands out one message of a key at a time, in order; messages without a key are not held back', async () => {
      const { queues } = await open();
      await queues.enqueue('k', [item('k1', 'alice'), item('k2', 'alice'), item('n1'), item('k3', 'bob'), item('k4', 'alice')]);
      const first = await queues.claim('k', 10, HOLD);
      assert.deepEqual(first.map((m) => m.id), ['k1', 'n1', 'k3']);
      await queues.ack('k', [first[0].seq]);
      assert.deepEqual((await queues.claim('k', 10, HOLD)).map((m) => m.id), ['k2']);
    });

    it('a message given back after a failure waits for its back-off, and keeps the messages of its key behind it', async () => {
      const { queues } = await open();
      await queues.enqueue('r', [item('r1', 'k'), item('r2', 'k')]);
      const [m] = await queues.claim('r', 10, HOLD);
      await queues.retry('r', m.seq, HOLD);
      assert.deepEqual(await queues.claim('r', 10, HOLD), [], 'backing off, and r2 waits behind it');
      await queues.retry('r', m.seq, 0);
      const again = await queues.claim('r', 10, HOLD);
      assert.deepEqual(again.map((x) => [x.id, x.attempts]), [['r1', 2]]);
    });

    it('a claim that lapses is handed out again, counted as a further attempt, with the same id', async () => {
      const { queues } = await open();
      await queues.enqueue('l', [item('l1')]);
      const [first] = await queues.claim('l', 1, LAPSE);
      const [again] = await queues.claim('l', 1, HOLD);
      assert.equal(again.id, first.id);
      assert.equal(again.seq, first.seq);
      assert.equal(again.attempts, 2);
    });

    it('a renewed claim does not lapse', async () => {
      const { queues } = await open();
      await queues.enqueue('n', [item('n1')]);
      const [m] = await queues.claim('n', 1, LAPSE);
      await queues.renew('n', [m.seq], HOLD);
      assert.deepEqual(await queues.claim('n', 1, HOLD), []);
    });

    it('two claims at once never share a message', async () => {
      const { queues } = await open();
      await queues.enqueue('c', Array.from({ length: 20 }, (_, i) => item(`c${i}`)));
      const claims = await Promise.all(Array.from({ length: 5 }, () => queues.claim('c', 6, HOLD)));
      const ids = claims.flat().map((m) => m.id);
      assert.equal(ids.length, 20);
      assert.equal(new Set(ids).size, 20);
    });

    it('sizes one queue alone, in-flight messages included', async () => {
      const { queues } = await open();
      await queues.enqueue('s', [item('s1'), item('s2')]);
      await queues.enqueue('other', [item('o1')]);
      await queues.claim('s', 1, HOLD);
      assert.deepEqual(await queues.size('s'), { depth: 2, bytes: 2 * item('s1').body.length });
      assert.deepEqual(await queues.size('never-used'), { depth: 0, bytes: 0 });
    });

    it('purges a queue, in-flight messages included, and lists named queues even when empty', async () => {
      const { queues } = await open();
      await queues.enqueue('p', [item('p1'), item('p2'), item('p3')]);
      await queues.claim('p', 1, HOLD);
      assert.equal(await queues.purge('p'), 3);
      assert.deepEqual(await queues.claim('p', 10, HOLD), []);
      const listed = await queues.list(['p', 'unused']);
      assert.deepEqual(listed.map((q) => [q.name, q.depth, q.inFlight, q.oldest]), [['p', 0, 0, null], ['unused', 0, 0, null]]);
    });

    it('tells listeners when messages are enqueued', async () => {
      const { queues } = await open();
      const told: string[] = [];
      const stop = queues.onAvailable((q) => told.push(q));
      await queues.enqueue('w', [item('w1')]);
      stop();
      await queues.enqueue('w', [item('w2')]);
      assert.deepEqual(told, ['w']);
    });

    it('keeps messages across a restart; one handed out before it comes back as a further attempt', async () => {
      const { storage, queues, place } = await open();
      await queues.enqueue('d', [item('d1', 'k'), item('d2', 'k'), item('d3')]);
      // Claimed with a lease that lapses at once: the database keeps leases, a process forgets them.
      const claimed = await queues.claim('d', 10, LAPSE);
      assert.deepEqual(claimed.map((m) => m.id), ['d1', 'd3']);
      await queues.ack('d', [claimed[1].seq]);
      await storage.close();
      const reopened = await open(place);
      const [depth] = await reopened.queues.list([]);
      assert.equal(depth.depth, 2);
      assert.deepEqual((await reopened.queues.claim('d', 10, HOLD)).map((m) => [m.id, m.attempts]), [['d1', 2]]);
    });
  });
}
