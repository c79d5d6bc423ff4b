import type pg from 'pg';
import type { Logger } from '../../base/log.js';

/**
 * Electing the primary: whoever holds a session-level advisory lock. The holder's connection is its
 * term: when the process dies the server drops the session and the lock with it, and the others,
 * trying every second, take over. A primary that cannot confirm its connection within a bound
 * steps down at once, so two instances never both believe they are primary for longer than the
 * server takes to notice the dead session (bounded by the TCP keepalives set on it).
 */

/** How often a candidate tries for the lock, and the primary checks it still holds its session. */
const ELECTION_INTERVAL_MS = 1000;
const CHECK_TIMEOUT_MS = 2000;
/** Arbitrary constant: the advisory-lock namespace of primary election (second key: the schema). */
const LOCK_NAMESPACE = 0x52756f;

export class Election {
  private client: pg.Client | undefined;
  private primary = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly connect: () => pg.Client,
    private readonly schema: string,
    private readonly onRole: (primary: boolean) => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.tick();
  }

  get isPrimary(): boolean {
    return this.primary;
  }

  /** Gives the lock up (closing the session releases it) and stops campaigning. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.drop();
  }

  private tick(): void {
    this.running = this.round().catch((err: unknown) => {
      this.log.warn({ err: (err as Error).message }, 'primary election: lost the database connection');
      return this.drop();
    }).then(() => {
      if (this.stopped) return;
      this.timer = setTimeout(() => this.tick(), ELECTION_INTERVAL_MS);
      this.timer.unref();
    });
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const client = this.client ?? (await this.open());
    if (this.primary) {
      await withTimeout(client.query('SELECT 1'), CHECK_TIMEOUT_MS);
      return;
    }
    const { rows } = await withTimeout(client.query<{ won: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS won', [LOCK_NAMESPACE, this.schema]), CHECK_TIMEOUT_MS);
    if (rows[0]?.won && !this.stopped) this.setRole(true);
  }

  private async open(): Promise<pg.Client> {
    const client = this.connect();
    const lost = () => {
      if (this.client === client) void this.drop();
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.connect();
    // The server must notice a vanished primary quickly to free the lock: keepalives on this session.
    await client.query('SET tcp_keepalives_idle = 2; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3');
    this.client = client;
    return client;
  }

  private async drop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (this.primary) this.setRole(false);
    // Not awaited: ending a connection whose server vanished can take as long as TCP does.
    void client?.end().catch(() => undefined);
  }

  private setRole(primary: boolean): void {
    this.primary = primary;
    this.log.info(primary ? 'this instance is now the primary' : 'this instance is no longer the primary');
    this.onRole(primary);
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
