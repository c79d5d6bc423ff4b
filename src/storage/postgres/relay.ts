import type { Logger } from '../../base/log.js';
import type { ClusterRelay, RelayMessage } from '../contract.js';

/**
 * The cluster relay on PostgreSQL: NOTIFY on the schema's relay channel through the pool, heard
 * on the change feed's LISTEN connection. Messages published in one tick go in one NOTIFY (as
 * many as fit its payload); one NOTIFY is in flight at a time, so under load the next one carries
 * everything that came meanwhile. Nothing is retried: a batch the database did not take is
 * dropped, so none arrives twice; the instances' own editors never depend on it.
 */

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7900;
/** One message at most: a payload holds at least one, with the envelope and a long instance id. */
const MAX_MESSAGE_BYTES = 7000;
/** Messages waiting while a NOTIFY is in flight; beyond it the oldest are dropped. */
const MAX_WAITING = 2000;
/** A NOTIFY not answered by then is given up (its messages dropped), so a stalled link holds nothing up long. */
const SEND_TIMEOUT_MS = 2000;

export function relayChannelOf(schema: string): string {
  return `${schema}_relay`;
}

export type Notify = (channel: string, payload: string, timeoutMs: number) => Promise<void>;

export class PgRelay implements ClusterRelay {
  readonly maxMessageBytes = MAX_MESSAGE_BYTES;
  private readonly listeners = new Set<(message: RelayMessage) => void>();
  private readonly channel: string;
  private readonly envelopeBytes: number;
  private waiting: { entry: string; bytes: number }[] = [];
  private sending = false;
  private healthy = true;
  private closed = false;

  constructor(private readonly notify: Notify, schema: string, private readonly instanceId: string, private readonly log: Logger) {
    this.channel = relayChannelOf(schema);
    this.envelopeBytes = Buffer.byteLength(JSON.stringify({ o: instanceId, m: [] }));
  }

  publish(kind: string, data: unknown): void {
    if (this.closed) return;
    let entry: string;
    try {
      entry = JSON.stringify({ k: kind, d: data });
    } catch {
      return;
    }
    const bytes = Buffer.byteLength(entry);
    if (bytes + this.envelopeBytes + 1 > MAX_PAYLOAD_BYTES) {
      this.log.debug({ kind, bytes }, 'cluster relay: a message too large to relay was dropped');
      return;
    }
    if (this.waiting.length >= MAX_WAITING) this.waiting.shift();
    this.waiting.push({ entry, bytes });
    if (this.sending) return;
    this.sending = true;
    setImmediate(() => void this.drain());
  }

  onMessage(listener: (message: RelayMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A NOTIFY payload heard on the relay channel. */
  deliver(payload: string): void {
    let batch: { o?: unknown; m?: unknown };
    try {
      batch = JSON.parse(payload) as { o?: unknown; m?: unknown };
    } catch {
      return;
    }
    if (typeof batch.o !== 'string' || batch.o === this.instanceId || !Array.isArray(batch.m)) return;
    for (const m of batch.m as { k?: unknown; d?: unknown }[]) {
      if (typeof m?.k !== 'string') continue;
      const message = { origin: batch.o, kind: m.k, data: m.d };
      for (const listener of this.listeners) {
        try {
          listener(message);
        } catch (err) {
          this.log.error({ err }, 'cluster relay listener failed');
        }
      }
    }
  }

  close(): void {
    this.closed = true;
    this.waiting = [];
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0 && !this.closed) {
      let size = this.envelopeBytes;
      let n = 0;
      while (n < this.waiting.length && size + this.waiting[n].bytes + 1 <= MAX_PAYLOAD_BYTES) size += this.waiting[n++].bytes + 1;
      const batch = this.waiting.splice(0, n);
      const payload = `{"o":${JSON.stringify(this.instanceId)},"m":[${batch.map((b) => b.entry).join(',')}]}`;
      try {
        await this.notify(this.channel, payload, SEND_TIMEOUT_MS);
        if (!this.healthy) this.log.info('cluster relay: sending again');
        this.healthy = true;
      } catch (err) {
        if (this.healthy) this.log.warn({ err: (err as Error).message }, 'cluster relay: the database did not take a batch; other instances miss it');
        this.healthy = false;
      }
    }
    this.sending = false;
  }
}
