import type { Logger } from '../base/log.js';
import type { SharedModules } from '../storage/contract.js';
import { errorMessage, isRunnelError } from '../base/errors.js';
import type { SetFlags } from './loader.js';

/**
 * How a module came to be loaded; only npm-installed ones (`npm`, `local`, `tarball`) can be
 * removed. `dependency`: npm put it in node_modules for another module; installing it by name
 * makes it the user's own.
 */
export type ModuleSource = 'npm' | 'local' | 'tarball' | 'nodesDir' | 'builtin' | 'dependency';

export interface ModuleRecord {
  source: ModuleSource;
  version: string;
  sets: SetFlags;
  /** For `local`: the directory it was installed from (every instance installs from it). */
  path?: string;
}

export const REMOVABLE: ModuleSource[] = ['npm', 'local', 'tarball'];

/** What an instance reports about one module (GET /cluster, each instance's `modules`). */
export interface ModuleState {
  /** The version loaded here; null when none is. */
  version: string | null;
  state: 'installed' | 'installing' | 'removing' | 'failed';
  /** The version the shared list asks for, while this instance is not there. */
  wanted?: string;
  error?: { code: string; message: string };
}

/** What following the shared list needs of this instance's module manager. */
export interface LocalModules {
  /** What this instance's user dir has, by module name. */
  readonly records: Readonly<Record<string, ModuleRecord>>;
  /** The enabled flags of a loaded module's sets; undefined when it is not loaded. */
  loadedSets(name: string): SetFlags | undefined;
  /** Runs a change in the manager's one-at-a-time queue. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Installs (or upgrades to) what `want` describes, under this instance's own install policy. */
  installWanted(name: string, want: ModuleRecord, tarball: () => Promise<Buffer | undefined>): Promise<void>;
  removeInstalled(name: string): Promise<void>;
  applyFlags(name: string, sets: SetFlags): Promise<void>;
}

/**
 * Keeps this instance's modules in step with the list every instance shares: a change made here
 * is published after it succeeded locally; a change published elsewhere is installed, upgraded,
 * disabled or removed here. What fails here is kept in `states` (shown in the cluster view) and
 * retried when the list changes again, or after the database was away.
 */
export class ModuleSync {
  private readonly failed = new Map<string, { want: string; state: ModuleState }>();
  private readonly busy = new Map<string, ModuleState>();
  private queued: Promise<void> | undefined;

  constructor(private readonly shared: SharedModules, private readonly local: LocalModules, private readonly log: Logger) {}

  /** A change made here is refused (503) before it starts when the shared list cannot be read. */
  async assertReachable(): Promise<void> {
    await this.shared.list();
  }

  async has(name: string): Promise<boolean> {
    return (await this.shared.list()).some((e) => e.name === name);
  }

  /** Records a local change in the shared list; `record` undefined: the module was removed. */
  async publish(name: string, record: ModuleRecord | undefined, tarball?: Buffer | null): Promise<void> {
    if (record) await this.shared.put(name, { ...record }, tarball);
    else await this.shared.remove(name);
    this.failed.delete(name);
  }

  /** Modules whose last change here is in progress or failed. */
  get states(): ReadonlyMap<string, ModuleState> {
    const all = new Map([...this.failed].map(([name, f]) => [name, f.state]));
    for (const [name, state] of this.busy) all.set(name, state);
    return all;
  }

  /** Whether a removal or disable waits for flows to stop using a type. */
  get blockedByFlows(): boolean {
    return [...this.failed.values()].some((f) => f.state.error?.code === 'type_in_use');
  }

  /**
   * Brings this instance to the shared list. `retry`: also retry changes that failed here for
   * the same wanted state (after a resync, a start, or flows that stopped using a type).
   */
  reconcile(retry: boolean): Promise<void> {
    // Changes arriving while one reconcile waits are covered by it: it reads the list when it runs.
    this.queued ??= this.local.run(async () => {
      this.queued = undefined;
      await this.reconcileNow(retry);
    });
    return this.queued;
  }

  private async reconcileNow(retry: boolean): Promise<void> {
    const wanted = new Map((await this.shared.list()).map((e) => [e.name, e.record as unknown as ModuleRecord]));
    // A module that failed here and that another instance removed from the list is no failure any more.
    for (const name of this.failed.keys()) if (!wanted.has(name) && !this.local.records[name]) this.failed.delete(name);
    for (const [name, want] of wanted) {
      await this.step(name, want, retry, async () => {
        if (this.needsInstall(name, want)) {
          this.busy.set(name, { version: this.loadedVersion(name), state: 'installing', wanted: want.version });
          await this.local.installWanted(name, want, () => this.shared.tarball(name));
        }
        if (this.flagsDiffer(name, want.sets)) await this.local.applyFlags(name, want.sets);
      });
    }
    for (const [name, rec] of Object.entries(this.local.records)) {
      if (wanted.has(name) || !REMOVABLE.includes(rec.source)) continue;
      await this.step(name, undefined, retry, async () => {
        this.busy.set(name, { version: this.loadedVersion(name), state: 'removing' });
        await this.local.removeInstalled(name);
      });
    }
  }

  private async step(name: string, want: ModuleRecord | undefined, retry: boolean, work: () => Promise<void>): Promise<void> {
    const key = JSON.stringify(want ?? null);
    const last = this.failed.get(name);
    if (last && last.want === key && !retry) return;
    try {
      await work();
      this.failed.delete(name);
    } catch (err) {
      const error = { code: isRunnelError(err) ? err.code : 'internal_error', message: errorMessage(err) };
      this.failed.set(name, { want: key, state: { version: this.loadedVersion(name), state: 'failed', ...(want ? { wanted: want.version } : {}), error } });
      this.log.error({ module: name, err: error.message }, want ? 'installing a module of the shared list failed here' : 'removing a module the shared list no longer has failed here');
    } finally {
      this.busy.delete(name);
    }
  }

  private loadedVersion(name: string): string | null {
    return this.local.loadedSets(name) ? (this.local.records[name]?.version ?? null) : null;
  }

  private needsInstall(name: string, want: ModuleRecord): boolean {
    if (!REMOVABLE.includes(want.source)) return false;
    const have = this.local.records[name];
    return !this.local.loadedSets(name) || !have || !REMOVABLE.includes(have.source) || have.version !== want.version;
  }

  private flagsDiffer(name: string, sets: SetFlags): boolean {
    const loaded = this.local.loadedSets(name);
    return loaded !== undefined && Object.entries(sets).some(([set, enabled]) => set in loaded && loaded[set] !== enabled);
  }
}
