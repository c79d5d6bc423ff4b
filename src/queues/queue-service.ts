import type { Logger } from '../base/log.js';
import type { ClaimedMessage, QueueItem, QueueStore } from '../storage/queue-contract.js';
import { QueueMessageError } from './codec.js';
import { Consumer, type Outcome } from './consumer.js';
import { Rate } from './rates.js';
import type { QueueSettings } from '../settings/queues.js';

/** One queue as GET /queues shows it: the store's numbers, and this instance's rates. */
export interface QueueInfo {
  name: string;
  depth: number;
  inFlight: number;
  bytes: number;
  /** Milliseconds since the oldest stored message was enqueued; null when empty. */
  oldestAgeMs: number | null;
  /** Per second over the last minute, on this instance. */
  rates: { enqueued: number; acknowledged: number };
  /** Messages this instance sent to a dead-letter output since it started. */
  deadLetters: number;
  /** `queue in` nodes taking from the queue on this instance. */
  consumers: number;
}

interface Counters {
  enqueued: Rate;
  acknowledged: Rate;
  dead: number;
}

/** How long a queue's depth, read for its bound, is trusted: a bound may be overshot by what arrives meanwhile. */
const DEPTH_MAX_AGE_MS = 250;
/** How often a producer waiting for room looks again. */
const ROOM_POLL_MS = 100;

/**
 * Durable queues as the queue nodes use them: bounded, batched enqueues (the items of one turn of
 * the event loop are stored together, so producers share a disk flush or a transaction), and
 * consumers (src/queues/consumer.ts).
 */
export class QueueService {
  private readonly batches = new Map<string, { items: QueueItem[]; bytes: number; primaryOnly: boolean; done: Promise<void> }>();
  /** Per queue, the last message admitted (or refused): the next one is checked after it. */
  private readonly admissions = new Map<string, Promise<void>>();
  /** Per queue, the batch being stored (settled either way): the next one waits for it. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly depths = new Map<string, { depth: number; bytes: number; at: number }>();
  private readonly readings = new Map<string, Promise<{ depth: number; bytes: number }>>();
  private readonly counters = new Map<string, Counters>();
  private readonly consumers = new Set<Consumer>();

  constructor(
    private readonly store: QueueStore,
    readonly settings: QueueSettings,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Stores one encoded message; resolves once it is durable. At the queue's bound it fails with
   * `queue_full`, or with `wait` waits for room while `open()` holds. `primaryOnly`: put by a
   * primary-only tab, so stored only with the primary's lease (QueueStore.enqueue).
   */
  async put(queue: string, item: QueueItem, bound: { maxLength: number; maxBytes: number; wait: boolean; open: () => boolean }, primaryOnly = false): Promise<void> {
    const bytes = Buffer.byteLength(item.body);
    // Messages are admitted one after another, so a queue keeps the order they were put in even
    // while one waits for the queue's depth or for room.
    const turn = (this.admissions.get(queue) ?? Promise.resolve()).then(() => this.waitForRoom(queue, bytes, bound));
    const settled = turn.catch(() => undefined).then(() => {
      if (this.admissions.get(queue) === settled) this.admissions.delete(queue);
    });
    this.admissions.set(queue, settled);
    await turn;
    let batch = this.batches.get(queue);
    // Primary-only messages go in batches of their own (the store fences them by the lease).
    if (!batch || batch.primaryOnly !== primaryOnly) {
      // One batch per queue is stored at a time, so a queue keeps the order its messages were put in.
      const previous = this.tails.get(queue);
      const items: QueueItem[] = [];
      const done = (previous ?? Promise.resolve())
        .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
        .then(() => {
          // A consumer here with free slots takes the batch's messages as they are stored: an idle
          // queue's hand-off costs the enqueue alone, not a claim after it.
          const taker = [...this.consumers].find((c) => c.queue === queue);
          const hand = taker?.handOff(items.filter((i) => i.key === null).length);
          if (this.batches.get(queue) === next) this.batches.delete(queue);
          return this.store.enqueue(queue, items, primaryOnly, hand && { max: hand.max, leaseMs: this.settings.leaseMs }).then(
            (claimed) => hand?.take(claimed),
            (err: unknown) => {
              hand?.take([]);
              throw err;
            },
          );
        });
      const tail = done.catch(() => undefined).then(() => {
        if (this.tails.get(queue) === tail) this.tails.delete(queue);
      });
      this.tails.set(queue, tail);
      const next = { items, bytes: 0, primaryOnly, done };
      this.batches.set(queue, next);
      batch = next;
    }
    batch.items.push(item);
    batch.bytes += bytes;
    await batch.done;
    this.countersOf(queue).enqueued.add(1);
    const depth = this.depths.get(queue);
    if (depth) {
      depth.depth++;
      depth.bytes += bytes;
    }
  }

  /** Starts taking messages off `queue`; `handle` decides each message's outcome. */
  consume(queue: string, concurrency: number, handle: (message: ClaimedMessage) => Promise<Outcome>): { stop(graceMs: number): Promise<void> } {
    const counters = this.countersOf(queue);
    const consumer = new Consumer(
      this.store,
      queue,
      { concurrency, leaseMs: this.settings.leaseMs, pollMs: this.settings.pollMs },
      async (message) => {
        const outcome = await handle(message);
        if (outcome.ack) counters.acknowledged.add(1);
        return outcome;
      },
      this.log,
    );
    this.consumers.add(consumer);
    return {
      stop: async (graceMs) => {
        this.consumers.delete(consumer);
        await consumer.stop(graceMs);
      },
    };
  }

  /** A message sent to a dead-letter output, for GET /queues. */
  countDead(queue: string): void {
    this.countersOf(queue).dead++;
  }

  async list(): Promise<QueueInfo[]> {
    const now = this.now();
    const named = new Set([...this.counters.keys(), ...[...this.consumers].map((c) => c.queue)]);
    return (await this.store.list(named)).map((q) => {
      const counters = this.countersOf(q.name);
      return {
        name: q.name,
        depth: q.depth,
        inFlight: q.inFlight,
        bytes: q.bytes,
        oldestAgeMs: q.oldest === null ? null : Math.max(0, now - q.oldest),
        rates: { enqueued: counters.enqueued.perSecond(), acknowledged: counters.acknowledged.perSecond() },
        deadLetters: counters.dead,
        consumers: [...this.consumers].filter((c) => c.queue === q.name).length,
      };
    });
  }

  /** Of these queues, those holding messages that no consumer on this instance takes (a renamed or removed queue in left them). */
  async unattended(queues: Iterable<string>): Promise<Array<{ name: string; depth: number }>> {
    const taken = new Set([...this.consumers].map((c) => c.queue));
    const left = [...new Set(queues)].filter((name) => !taken.has(name));
    const sizes = await Promise.all(left.map(async (name) => ({ name, depth: (await this.store.size(name)).depth })));
    return sizes.filter((q) => q.depth > 0);
  }

  async purge(queue: string): Promise<number> {
    this.depths.delete(queue);
    return this.store.purge(queue);
  }

  private async waitForRoom(queue: string, bytes: number, bound: { maxLength: number; maxBytes: number; wait: boolean; open: () => boolean }): Promise<void> {
    while (await this.isFull(queue, bytes, bound)) {
      if (!bound.wait) throw new QueueMessageError('queue_full', `Queue "${queue}" is full (maxLength ${bound.maxLength} messages, maxBytes ${bound.maxBytes} bytes)`);
      if (!bound.open()) throw new QueueMessageError('queue_closed', `The node stopped while waiting for room on queue "${queue}"`);
      await new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS));
    }
  }

  /**
   * Admits on the depth last read (counting what was put since), re-reading it in the background
   * once it is older than DEPTH_MAX_AGE_MS: a message on a queue far from its bound does not wait
   * for a count. Only a queue never read, or one the last reading says is full, waits for a fresh
   * reading, so a message is refused only on a fresh one.
   */
  private async isFull(queue: string, bytes: number, bound: { maxLength: number; maxBytes: number }): Promise<boolean> {
    const full = (depth: { depth: number; bytes: number }) => {
      const waiting = this.batches.get(queue);
      return depth.depth + (waiting?.items.length ?? 0) >= bound.maxLength || depth.bytes + (waiting?.bytes ?? 0) + bytes > bound.maxBytes;
    };
    const known = this.depths.get(queue);
    const stale = !known || this.now() - known.at > DEPTH_MAX_AGE_MS;
    if (known && !full(known)) {
      if (stale) void this.readDepth(queue).catch(() => undefined);
      return false;
    }
    return full(known && !stale ? known : await this.readDepth(queue));
  }

  /** Reads a queue's depth from the store; one reading at a time per queue. */
  private readDepth(queue: string): Promise<{ depth: number; bytes: number }> {
    let reading = this.readings.get(queue);
    if (!reading) {
      reading = this.store.size(queue).then((size) => {
        const depth = { ...size, at: this.now() };
        this.depths.set(queue, depth);
        return depth;
      }).finally(() => this.readings.delete(queue));
      this.readings.set(queue, reading);
    }
    return reading;
  }

  private countersOf(queue: string): Counters {
    let c = this.counters.get(queue);
    if (!c) {
      c = { enqueued: new Rate(this.now), acknowledged: new Rate(this.now), dead: 0 };
      this.counters.set(queue, c);
    }
    return c;
  }
}
