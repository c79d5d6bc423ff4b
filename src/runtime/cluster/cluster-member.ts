import type { Logger } from '../../base/log.js';
import { SerialQueue } from '../../base/serial-queue.js';
import type { InstanceRecord, SharedStorage } from '../../storage/contract.js';

/**
 * This instance's part in a cluster: it campaigns for primary (telling the runtime when the role
 * changes) and heartbeats what it runs, reading the list of live instances back each time, so
 * GET /cluster answers from memory at once, during a database fault too (the list then shows when
 * each instance was last heard of, and this instance as it is now).
 */

const HEARTBEAT_INTERVAL_MS = 1000;
const REREAD_MS = 250;

export interface MemberHost {
  log: Logger;
  /** What a heartbeat says about this instance. */
  describe(primary: boolean): Omit<InstanceRecord, 'id' | 'lastSeen'>;
  setPrimary(primary: boolean): Promise<void>;
  now?: () => number;
}

export class ClusterMember {
  private primary = false;
  private epoch: number | null = null;
  private leaveElection: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Heartbeats one at a time: a slow database never has two of this instance's in flight. */
  private readonly beats = new SerialQueue();
  private lastList: InstanceRecord[] = [];
  private firstList: Promise<void> | undefined;
  private healthy = true;
  private stopped = false;
  private lastRead = 0;
  private rereading: Promise<void> | undefined;

  private readonly now: () => number;

  constructor(private readonly shared: SharedStorage, private readonly host: MemberHost) {
    this.now = host.now ?? Date.now;
  }

  start(): void {
    this.leaveElection = this.shared.campaign((primary, epoch) => {
      this.primary = primary;
      this.epoch = primary ? (epoch ?? null) : null;
      this.host.setPrimary(primary).catch((err: unknown) => this.host.log.error({ err }, 'switching primary-only tabs failed'));
      this.beat();
    });
    this.beat();
  }

  get isPrimary(): boolean {
    return this.primary;
  }

  /** The instances as last read (read once first if never yet), with this one as it is now. */
  async instances(): Promise<InstanceRecord[]> {
    this.firstList ??= this.readList();
    await this.firstList;
    const self = this.shared.instanceId;
    return this.lastList.map((i) => (i.id === self ? { ...i, ...this.host.describe(this.primary), epoch: this.epoch } : i));
  }

  /**
   * The instances read again now, for a caller that looks for an instance the last list lacks (one
   * that started since: its first heartbeat may be newer than this instance's last read). Reads are
   * shared and at most one per REREAD_MS, so requests naming unknown instances cost the database little.
   */
  async reread(): Promise<InstanceRecord[]> {
    if (this.now() - this.lastRead >= REREAD_MS) this.rereading ??= this.readList().finally(() => (this.rereading = undefined));
    await this.rereading;
    return this.instances();
  }

  private async readList(): Promise<void> {
    this.lastRead = this.now();
    try {
      this.lastList = await this.shared.listInstances();
    } catch (err) {
      this.host.log.debug({ err: (err as Error).message }, 'cluster view not refreshed');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.beats.drain();
    await this.leaveElection?.();
    await this.shared.leave().catch(() => undefined);
  }

  private beat(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    void this.beats.run(() => this.shared.heartbeat(this.host.describe(this.primary))).then(
      () => {
        if (!this.healthy) this.host.log.info('cluster heartbeats resumed');
        this.healthy = true;
        const read = this.readList();
        this.firstList ??= read;
        return read;
      },
      (err: unknown) => {
        if (this.healthy) this.host.log.warn({ err: (err as Error).message }, 'cluster heartbeat failed; retrying');
        this.healthy = false;
      },
    );
    this.timer = setTimeout(() => this.beat(), HEARTBEAT_INTERVAL_MS);
    this.timer.unref();
  }
}
