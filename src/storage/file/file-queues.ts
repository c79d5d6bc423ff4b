import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { ClaimedMessage, HandOff, QueueDepth, QueueItem, QueueStore } from '../queue-contract.js';
import { Journal } from './queue-journal.js';

/**
 * Queues of a single instance, durable on its disk: each queue is a journal in `<userDir>/queues/`
 * (src/storage/file/queue-journal.ts), replayed into memory at start. Enqueues, claims, retries and
 * acknowledgements are journalled; a claim is on disk before its message is handed out, so a
 * message handed out before a crash is known as a redelivery after it.
 */

interface Stored extends ClaimedMessage {
  visibleAt: number;
  leaseUntil: number;
  bytes: number;
}

/** Journal records: enqueue, claim, ack, retry, purge. */
type JournalRecord =
  | { e: [seq: number, id: string, key: string | null, body: string, enqueuedAt: number, attempts: number] }
  | { c: number[] }
  | { a: number[] }
  | { r: number; v: number }
  | { p: number };

/** A journal is rewritten with only its live messages once it holds this many lines more than them. */
const COMPACT_SLACK = 10_000;

class FileQueue {
  readonly messages = new Map<number, Stored>();
  nextSeq = 1;
  constructor(readonly journal: Journal) {}

  async load(): Promise<void> {
    for (const record of (await this.journal.replay()) as JournalRecord[]) this.apply(record);
  }

  apply(record: JournalRecord): void {
    if ('e' in record) {
      const [seq, id, key, body, enqueuedAt, attempts] = record.e;
      this.messages.set(seq, { seq, id, key, body, enqueuedAt, attempts, visibleAt: 0, leaseUntil: 0, bytes: Buffer.byteLength(body) });
      this.nextSeq = Math.max(this.nextSeq, seq + 1);
    } else if ('c' in record) {
      for (const seq of record.c) {
        const m = this.messages.get(seq);
        if (m) m.attempts++;
      }
    } else if ('a' in record) {
      for (const seq of record.a) this.messages.delete(seq);
    } else if ('r' in record) {
      const m = this.messages.get(record.r);
      if (m) {
        m.visibleAt = record.v;
        m.leaseUntil = 0;
      }
    } else if ('p' in record) {
      for (const seq of this.messages.keys()) if (seq <= record.p) this.messages.delete(seq);
    }
  }

  /**
   * Applies records in memory and journals them; resolves once they are on disk. Memory is ahead of
   * the disk only for callers still waiting, none of whom has been told anything yet.
   */
  record(records: JournalRecord[]): Promise<void> {
    for (const r of records) this.apply(r);
    const written = this.journal.append(records);
    // Once the journal is mostly acknowledged messages, it is rewritten with the live ones.
    if (this.journal.lines >= this.messages.size + COMPACT_SLACK) {
      this.journal.compact(() => [...this.messages.values()].map((m) => ({ e: [m.seq, m.id, m.key, m.body, m.enqueuedAt, m.attempts] })));
    }
    return written;
  }
}

export class FileQueueStore implements QueueStore {
  private readonly queues = new Map<string, Promise<FileQueue>>();
  private readonly listeners = new Set<(queue: string) => void>();
  /** The queues folder is made when a queue is first used, not in every user dir. */
  private made: Promise<void> | undefined;

  constructor(private readonly dir: string, private readonly now: () => number = Date.now) {}

  /** Opens every queue journal found, so GET /queues lists queues holding messages from before a restart. */
  async init(): Promise<void> {
    const files = await readdir(this.dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return [];
      throw e;
    });
    for (const file of files) {
      if (file.endsWith('.log')) await this.queue(decodeURIComponent(file.slice(0, -4)));
    }
  }

  async enqueue(queue: string, items: QueueItem[], _primaryOnly?: boolean, handOff?: HandOff): Promise<ClaimedMessage[]> {
    const q = await this.queue(queue);
    const at = this.now();
    const seq = q.nextSeq;
    let left = handOff?.max ?? 0;
    const taken = items.flatMap((item, i) => (item.key === null && left-- > 0 ? [seq + i] : []));
    // The hand-off's claim goes in the same append as the messages: one disk flush for both.
    const written = q.record([...items.map((item, i): JournalRecord => ({ e: [seq + i, item.id, item.key, item.body, at, 0] })), ...(taken.length ? [{ c: taken }] : [])]);
    const claimed = taken.map((s) => q.messages.get(s)!);
    for (const m of claimed) m.leaseUntil = at + handOff!.leaseMs;
    await written;
    this.announce(queue);
    return claimed.map(({ seq, id, key, body, attempts, enqueuedAt }) => ({ seq, id, key, body, attempts, enqueuedAt }));
  }

  async claim(queue: string, max: number, leaseMs: number): Promise<ClaimedMessage[]> {
    const q = await this.queue(queue);
    const now = this.now();
    const seen = new Set<string>();
    const claimed: Stored[] = [];
    for (const m of q.messages.values()) {
      if (claimed.length >= max) break;
      // Only the first message of a key may be claimed, whether or not it is claimable itself.
      if (m.key !== null) {
        if (seen.has(m.key)) continue;
        seen.add(m.key);
      }
      if (m.visibleAt > now || m.leaseUntil > now) continue;
      m.leaseUntil = now + leaseMs;
      claimed.push(m);
    }
    if (!claimed.length) return [];
    await q.record([{ c: claimed.map((m) => m.seq) }]);
    return claimed.map(({ seq, id, key, body, attempts, enqueuedAt }) => ({ seq, id, key, body, attempts, enqueuedAt }));
  }

  async renew(queue: string, seqs: number[], leaseMs: number): Promise<void> {
    const q = await this.queue(queue);
    const until = this.now() + leaseMs;
    for (const seq of seqs) {
      const m = q.messages.get(seq);
      if (m) m.leaseUntil = until;
    }
  }

  async ack(queue: string, seqs: number[]): Promise<void> {
    const q = await this.queue(queue);
    await q.record([{ a: seqs }]);
  }

  async retry(queue: string, seq: number, delayMs: number): Promise<void> {
    const q = await this.queue(queue);
    await q.record([{ r: seq, v: this.now() + delayMs }]);
    if (delayMs <= 0) this.announce(queue);
  }

  async purge(queue: string): Promise<number> {
    const q = await this.queue(queue);
    const count = q.messages.size;
    await q.record([{ p: q.nextSeq - 1 }]);
    return count;
  }

  async list(also: Iterable<string>): Promise<QueueDepth[]> {
    for (const name of also) await this.queue(name);
    const now = this.now();
    const result: QueueDepth[] = [];
    for (const [name, pending] of this.queues) {
      const q = await pending;
      let bytes = 0;
      let inFlight = 0;
      let oldest: number | null = null;
      for (const m of q.messages.values()) {
        bytes += m.bytes;
        if (m.leaseUntil > now) inFlight++;
        oldest ??= m.enqueuedAt;
      }
      result.push({ name, depth: q.messages.size, inFlight, bytes, oldest });
    }
    return result.sort((a, b) => a.name.localeCompare(b.name));
  }

  async size(queue: string): Promise<{ depth: number; bytes: number }> {
    const q = await this.queue(queue);
    let bytes = 0;
    for (const m of q.messages.values()) bytes += m.bytes;
    return { depth: q.messages.size, bytes };
  }

  onAvailable(listener: (queue: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    for (const pending of this.queues.values()) {
      await (await pending).journal.close();
    }
  }

  private announce(queue: string): void {
    for (const listener of this.listeners) listener(queue);
  }

  private queue(name: string): Promise<FileQueue> {
    let pending = this.queues.get(name);
    if (!pending) {
      this.made ??= mkdir(this.dir, { recursive: true }).then(() => undefined);
      const q = new FileQueue(new Journal(path.join(this.dir, `${encodeURIComponent(name)}.log`)));
      pending = this.made.then(() => q.load()).then(() => q);
      this.queues.set(name, pending);
    }
    return pending;
  }
}
