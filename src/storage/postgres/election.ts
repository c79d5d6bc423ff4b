import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { Logger } from '../../base/log.js';
import type { ClusterTimings } from '../../settings/cluster.js';

/**
 * Electing the primary: whoever holds the lease, one row with a holder, an epoch and an expiry
 * time on the database's clock. The primary renews it every `renewMs`; the others, as often, take
 * it once the server says it has expired, adding one to the epoch. Nothing depends on TCP noticing
 * a dead link (a stalled proxy keeps it looking alive) nor on the instances' clocks agreeing: only
 * the server compares times, and the primary measures with its own monotonic clock only how long
 * ago it sent a renewal that succeeded.
 *
 * The lease expires on the server no earlier than `leaseMs` after a successful renewal was sent,
 * so the primary fences itself (onRole(false)) at `sent + leaseMs - marginMs` unless a later renewal
 * succeeded: by the time another instance can take the lease, this one has stopped for `marginMs`.
 * The fence is a timer of its own, so it never waits behind a statement or a deploy.
 */

export class Election {
  private client: pg.Client | undefined;
  /** The epoch of the lease this instance holds; undefined when it is not the primary. */
  private epoch: number | undefined;
  private deadline = 0;
  private fence: NodeJS.Timeout | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly connect: () => pg.Client,
    private readonly table: string,
    private readonly instanceId: string,
    private readonly timings: ClusterTimings,
    private readonly onRole: (primary: boolean, epoch?: number) => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.tick();
  }

  /** Whether this instance may act as the primary now: it holds a lease it has not had to give up. */
  get isPrimary(): boolean {
    return this.epoch !== undefined && performance.now() < this.deadline;
  }

  /** Stops campaigning and hands the lease back, so another instance takes over at its next try. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    const epoch = this.epoch;
    this.stepDown();
    const client = this.client;
    if (epoch !== undefined && client) {
      await withTimeout(client.query(`UPDATE ${this.table} SET expires = now() WHERE id = 1 AND holder = $1 AND epoch = $2`, [this.instanceId, epoch]), this.timings.renewMs)
        .catch(() => undefined);
    }
    this.drop();
  }

  private tick(): void {
    this.running = this.round().catch((err: unknown) => {
      this.log.warn({ err: (err as Error).message }, 'primary election: no answer from the database');
      // The fence timer steps down if the lease cannot be renewed in time; the link is reopened.
      this.drop();
    }).then(() => {
      if (this.stopped) return;
      this.timer = setTimeout(() => this.tick(), this.timings.renewMs);
      this.timer.unref();
    });
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const client = this.client ?? (await this.open());
    const held = this.epoch;
    const sent = performance.now();
    const secs = this.timings.leaseMs / 1000;
    if (held !== undefined) {
      const { rowCount } = await withTimeout(client.query(
        `UPDATE ${this.table} SET expires = now() + make_interval(secs => $3) WHERE id = 1 AND holder = $1 AND epoch = $2 AND expires > now()`,
        [this.instanceId, held, secs],
      ), this.statementMs);
      if (this.epoch !== held) return;
      if (rowCount === 1) this.extend(sent);
      else this.stepDown('the lease was lost');
      return;
    }
    // Free, expired, or still this instance's (it stepped down while the lease was valid).
    const { rows } = await withTimeout(client.query<{ epoch: string }>(
      `UPDATE ${this.table} SET holder = $1, epoch = epoch + 1, expires = now() + make_interval(secs => $2)
         WHERE id = 1 AND (holder IS NULL OR holder = $1 OR expires <= now()) RETURNING epoch`,
      [this.instanceId, secs],
    ), this.statementMs);
    if (rows[0] === undefined || this.stopped || this.epoch !== undefined) return;
    this.epoch = Number(rows[0].epoch);
    this.extend(sent);
    this.log.info({ epoch: this.epoch }, 'this instance is now the primary');
    this.onRole(true, this.epoch);
  }

  /** A statement on the election connection that takes longer than this counts as a lost link. */
  private get statementMs(): number {
    return this.timings.renewMs * 2;
  }

  private extend(sent: number): void {
    this.deadline = sent + this.timings.leaseMs - this.timings.marginMs;
    clearTimeout(this.fence);
    this.fence = setTimeout(() => this.stepDown('the lease could not be renewed in time'), Math.max(0, this.deadline - performance.now()));
    this.fence.unref();
  }

  private stepDown(why?: string): void {
    clearTimeout(this.fence);
    if (this.epoch === undefined) return;
    const epoch = this.epoch;
    this.epoch = undefined;
    this.deadline = 0;
    this.log.info({ epoch, reason: why ?? 'stopping' }, 'this instance is no longer the primary');
    this.onRole(false, epoch);
  }

  private async open(): Promise<pg.Client> {
    const client = this.connect();
    // Errors surface through the statements; unhandled here they would crash the process.
    client.on('error', () => {
      if (this.client === client) this.drop();
    });
    try {
      await client.connect();
    } catch (e) {
      void client.end().catch(() => undefined);
      throw e;
    }
    this.client = client;
    return client;
  }

  private drop(): void {
    const client = this.client;
    this.client = undefined;
    // Not awaited: ending a connection whose server vanished can take as long as TCP does.
    void client?.end().catch(() => undefined);
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
