/**
 * Durable queues: what a storage backend keeps for the `queue out` and `queue in` nodes. The file
 * backend keeps a journal per queue on the local disk (one instance); the PostgreSQL backend keeps
 * one table every instance claims from. Both pass test/storage/queue-contract.ts.
 *
 * A message is stored once, claimed by one consumer at a time, and removed only when acknowledged;
 * a claim that is never acknowledged (its consumer died) lapses and the message is claimed again,
 * with `attempts` counting every claim. Messages with the same key are claimed one at a time, in
 * the order they were enqueued: the next waits until the one before is acknowledged.
 */

export interface QueueItem {
  /** A stable id, kept through redeliveries (for de-duplication downstream). */
  id: string;
  /** Messages with the same key are handled one at a time, in order; null: no order. */
  key: string | null;
  /** The encoded message (src/queues/codec.ts). */
  body: string;
}

export interface ClaimedMessage extends QueueItem {
  /** The message's place in its queue; what acknowledgements and retries name. */
  seq: number;
  /** Claims so far, this one included: above 1 the message is a redelivery. */
  attempts: number;
  /** Epoch milliseconds. */
  enqueuedAt: number;
}

/** One queue as GET /queues reports it, as far as the store knows. */
export interface QueueDepth {
  name: string;
  /** Messages stored and not yet acknowledged, in flight included. */
  depth: number;
  /** Claimed and not yet acknowledged or given back. */
  inFlight: number;
  /** Encoded size of the stored messages, in bytes. */
  bytes: number;
  /** Epoch milliseconds of the oldest stored message, null when empty. */
  oldest: number | null;
}

/** How many of an enqueue's items to claim for the enqueuing instance, and for how long. */
export interface HandOff {
  max: number;
  leaseMs: number;
}

export interface QueueStore {
  /**
   * Stores the items at the end of the queue. Durable when the promise resolves: a crash of this
   * process, or of this machine, afterwards does not lose them. `primaryOnly`: enqueued by a
   * primary-only tab, so stored only while this instance holds the primary's lease (a shared store
   * refuses it with LeaseLostError otherwise; a store of one instance has nobody to yield to).
   * `handOff`: up to `max` of the items without a key are claimed for the caller as they are stored
   * (a consumer of this instance with free slots) and returned, as claim() returns them: an idle
   * queue's hand-off then needs no claim of its own. Keyed items are never handed off, so a key's
   * order is decided by claim() alone.
   */
  enqueue(queue: string, items: QueueItem[], primaryOnly?: boolean, handOff?: HandOff): Promise<ClaimedMessage[]>;
  /**
   * Claims up to `max` messages that are visible, not claimed (or whose claim lapsed), and first of
   * their key. A claim lapses `leaseMs` after it is made unless renewed.
   */
  claim(queue: string, max: number, leaseMs: number): Promise<ClaimedMessage[]>;
  /** Extends the claims on these messages (their consumer is still working on them). */
  renew(queue: string, seqs: number[], leaseMs: number): Promise<void>;
  /** Removes acknowledged messages. */
  ack(queue: string, seqs: number[]): Promise<void>;
  /** Gives a claimed message back, to be claimed again `delayMs` from now (back-off after a failure). */
  retry(queue: string, seq: number, delayMs: number): Promise<void>;
  /** Removes every message of the queue, in flight or not; resolves with how many. */
  purge(queue: string): Promise<number>;
  /** Every queue holding messages, and those named in `also` even when empty. */
  list(also: Iterable<string>): Promise<QueueDepth[]>;
  /** One queue's stored messages (in flight included) and their bytes: what its bound is checked against. */
  size(queue: string): Promise<{ depth: number; bytes: number }>;
  /**
   * Calls `listener` when messages may have become available in a queue (enqueued anywhere, given
   * back at once); with '' when any queue may have them (notifications were lost).
   */
  onAvailable(listener: (queue: string) => void): () => void;
  close(): Promise<void>;
}
