import type pg from 'pg';
import type { Logger } from '../../base/log.js';
import type { StorageChange } from '../contract.js';
import { quoteIdent } from './connection.js';

/**
 * Changes other instances commit, delivered by LISTEN on one dedicated connection. Writers
 * `pg_notify` inside their transaction, so a notification arrives only once its change is visible.
 * A lost connection is retried with backoff; when it is back, listeners get `resync`, because
 * notifications sent meanwhile are gone and only comparing state can tell what changed.
 *
 * A connection can also go silent without an error (a stalled proxy or NAT between): every
 * `checkMs` the feed reads the stored rev on it, within `checkMs`. No answer counts as a lost
 * connection; an answer is passed on as a `flows` change (origin ''), so an instance that missed a
 * deploy, its own included (a commit whose answer was lost), finds out within one check.
 */

const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 2000;

/** The NOTIFY channel of a schema: one database may hold several clusters. */
export function channelOf(schema: string): string {
  return `${schema}_changes`;
}

export class ChangeFeed {
  private readonly listeners = new Set<(change: StorageChange) => void>();
  private client: pg.Client | undefined;
  private retryMs = RETRY_MIN_MS;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private checker: NodeJS.Timeout | undefined;

  constructor(
    private readonly connect: () => pg.Client,
    private readonly schema: string,
    private readonly instanceId: string,
    private readonly log: Logger,
    private readonly checkMs: number,
    /** The relay's channel, heard on the same connection, and who takes its payloads. */
    private readonly relay: { channel: string; deliver: (payload: string) => void },
  ) {}

  /** Connects and listens; throws when the first connection fails (the start reports it). */
  async start(): Promise<void> {
    await this.open();
    this.scheduleCheck();
  }

  onChange(listener: (change: StorageChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.checker);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async open(): Promise<void> {
    const client = this.connect();
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (n) => {
      if (n.channel === channelOf(this.schema) && n.payload) this.deliver(n.payload);
      else if (n.channel === this.relay.channel && n.payload) this.relay.deliver(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(channelOf(this.schema))}; LISTEN ${quoteIdent(this.relay.channel)}`);
    } catch (e) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw e;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.log.warn({ err: err?.message }, 'PostgreSQL change feed lost; reconnecting');
    // Not awaited: a silent connection may take as long as TCP does to close.
    void client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleCheck(): void {
    this.checker = setTimeout(() => {
      void this.check().finally(() => {
        if (!this.closed) this.scheduleCheck();
      });
    }, this.checkMs);
    this.checker.unref();
  }

  /** Proves the connection answers, and passes the stored rev on. */
  private async check(): Promise<void> {
    const client = this.client;
    if (!client) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      const { rows } = await Promise.race([
        client.query<{ rev: string; type: string }>(`SELECT rev, deployment_type AS type FROM ${quoteIdent(this.schema)}.flows WHERE id = 1`),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the change feed's connection did not answer within ${this.checkMs} ms`)), this.checkMs);
        }),
      ]);
      if (rows[0] && this.client === client) this.emit({ kind: 'flows', rev: rows[0].rev, type: rows[0].type, origin: '' });
    } catch (e) {
      this.lost(client, e as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  private scheduleReconnect(): void {
    this.timer = setTimeout(() => {
      this.open().then(
        () => {
          if (this.closed) return;
          this.retryMs = RETRY_MIN_MS;
          this.log.info('PostgreSQL change feed back');
          this.emit({ kind: 'resync' });
        },
        () => {
          this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
          if (!this.closed) this.scheduleReconnect();
        },
      );
    }, this.retryMs);
    this.timer.unref();
  }

  private deliver(payload: string): void {
    let change: StorageChange & { origin?: string };
    try {
      change = JSON.parse(payload) as StorageChange & { origin?: string };
    } catch {
      this.log.warn({ payload: payload.slice(0, 200) }, 'Unreadable change notification ignored');
      return;
    }
    if (change.origin === this.instanceId) return;
    this.emit(change);
  }

  private emit(change: StorageChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.log.error({ err }, 'change listener failed');
      }
    }
  }
}
