import type { Settings } from '../../settings/settings.js';
import type { InstanceRecord } from '../../storage/contract.js';
import type { ModuleManager } from '../../registry/modules.js';
import { planDeploy } from '../config/plan.js';
import { ClusterMember } from './cluster-member.js';
import { primaryOnlyIds } from '../config/primary-only.js';
import type { Storage } from '../../storage/contract.js';
import type { Logger } from '../../base/log.js';
import type { Registry } from '../../registry/registry.js';
import type { RunState } from '../deploy/run-state.js';
import type { RuntimeCredentials } from '../deploy/credentials.js';
import type { ActiveFlows } from '../deploy/active-flows.js';
import type { FlowSet } from '../flows/flow-set.js';
import { DEPLOYMENT_TYPES, type DeploymentType, type FlowsState } from '../config/deploy-types.js';

/** What GET /cluster says of this instance. */
export interface InstanceFacts {
  settings: Settings;
  version: string;
  modules: Pick<ModuleManager, 'sync' | 'states'>;
  /** GET /flows/state's `state`. */
  flowsState: () => FlowsState['state'];
}

export interface FollowerDeps {
  active: ActiveFlows;
  state: RunState;
  storage: Storage;
  log: Logger;
  registry: Pick<Registry, 'isKnownType'>;
  credentials: Pick<RuntimeCredentials, 'store'>;
  instance: InstanceFacts;
  /** Fences primary-only tabs the moment the role is lost, ahead of the deploy lock. */
  flowSet: Pick<FlowSet, 'fencePrimaryOnly' | 'unfencePrimaryOnly'>;
}

/**
 * Cluster following: with shared storage, applies what other instances deploy, keeps the module
 * list in step, and starts or stops primary-only tabs as this instance gains or loses the role.
 */
export class Follower {
  private followQueued: Promise<void> | undefined;
  private unfollow: (() => void) | undefined;
  private member: ClusterMember | undefined;
  private readonly active: ActiveFlows;
  private readonly state: RunState;
  private readonly storage: Storage;
  private readonly log: Logger;
  private readonly instance: InstanceFacts;
  /** The election's latest word, ahead of `state.primary`, which changes in the deploy lock. */
  private leaseHeld = false;

  constructor(private readonly deps: FollowerDeps) {
    ({ active: this.active, state: this.state, storage: this.storage, log: this.log, instance: this.instance } = deps);
  }

  /** Follows the instances sharing the storage (none without it): their deploys, module changes and the primary role. */
  start(): void {
    const shared = this.storage.shared;
    if (!shared) return;
    const sync = this.instance.modules.sync;
    const reconcile = (retry: boolean) => void sync?.reconcile(retry).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'reading the shared module list failed'));
    this.unfollow = shared.onChange((change) => {
      if (change.kind === 'modules' || change.kind === 'resync') reconcile(change.kind === 'resync');
      if (change.kind !== 'flows' && change.kind !== 'resync') return;
      // The change feed passes the stored rev on every few seconds: most of the time it is this one.
      if (change.kind === 'flows' && change.rev === this.state.active.rev) return;
      this.follow().then(
        // A removal or disable that flows blocked here may go through now.
        () => sync?.blockedByFlows && reconcile(true),
        (err: unknown) => this.log.error({ err }, 'applying the flows another instance deployed failed'),
      );
    });
    reconcile(true);
    this.member = new ClusterMember(shared, {
      log: this.log,
      describe: (primary) => this.describeInstance(primary),
      setPrimary: (primary) => this.setPrimary(primary),
    });
    this.member.start();
  }

  async stop(): Promise<void> {
    this.unfollow?.();
    await this.member?.stop();
  }

  /** GET /cluster: the live instances (just this one without shared storage). */
  /** An instance's `instanceUrl`, reading the list again when it lacks the instance (just started); null when it has none. */
  async urlOf(id: string): Promise<string | null> {
    const find = (list: InstanceRecord[]) => list.find((i) => i.id === id);
    const listed = find(await this.clusterView()) ?? (this.member && find(await this.member.reread()));
    return listed?.url ?? null;
  }

  async clusterView(): Promise<InstanceRecord[]> {
    if (this.member) return this.member.instances();
    return [{ id: this.instance.settings.instanceId ?? 'local', ...this.describeInstance(true), lastSeen: new Date().toISOString() }];
  }

  private describeInstance(primary: boolean): Omit<InstanceRecord, 'id' | 'lastSeen'> {
    const { settings, version, modules, flowsState } = this.instance;
    return { url: settings.instanceUrl ?? null, version, rev: this.state.active.rev, state: flowsState(), primary, modules: modules.states() };
  }

  /**
   * Starts or stops the primary-only tabs as this instance gains or loses the primary role. Losing
   * it fences them at once (their messages dropped), without waiting for the deploy lock, which a
   * deploy stuck on a silent database connection may hold; they are stopped in the lock after.
   */
  private setPrimary(primary: boolean): Promise<void> {
    this.leaseHeld = primary;
    if (!primary) this.deps.flowSet.fencePrimaryOnly();
    return this.active.exclusive(async () => {
      const held = this.leaseHeld;
      if (!held) this.deps.flowSet.fencePrimaryOnly();
      if (this.state.primary !== held) {
        this.state.primary = held;
        if (this.state.started) {
          const affected = primaryOnlyIds(this.state.active.flows);
          this.active.reparse();
          if (affected.size > 0) await this.active.restart(held ? new Set() : affected);
        }
      }
      // Running as the role says now (stopped if not primary): the fence can go, unless the role changed again meanwhile.
      if (this.leaseHeld === held) this.deps.flowSet.unfencePrimaryOnly();
    });
  }

  /**
   * Applies the configuration another instance saved, restarting what the deployment type it was
   * deployed with restarts. Runs in the deploy queue, so it never interleaves with a local deploy.
   */
  follow(): Promise<void> {
    // Notifications arriving while one is queued are covered by it: it reads the newest rev.
    this.followQueued ??= this.active.exclusive(async () => {
      this.followQueued = undefined;
      if (this.state.started) await this.followStored();
    });
    return this.followQueued;
  }

  /** Applies the stored configuration if another instance changed it; called inside the deploy lock. */
  async followStored(): Promise<void> {
    const snapshot = await this.storage.getFlows();
    if (snapshot.rev === this.state.active.rev) return;
    const old = this.state.active;
    const ids = new Set([...old.parsed.all.keys(), ...snapshot.flows.map((n) => n.id)]);
    const store = this.deps.credentials.store;
    const before = new Map([...ids].map((id) => [id, JSON.stringify(store.get(id))]));
    await store.load(snapshot.credentials);
    const changedNodes = new Set([...ids].filter((id) => JSON.stringify(store.get(id)) !== before.get(id)));
    const stored = (DEPLOYMENT_TYPES as readonly string[]).includes(snapshot.type ?? '') ? (snapshot.type as DeploymentType) : 'full';
    const type = stored === 'reload' ? 'full' : stored;
    const next = planDeploy(old.parsed, snapshot.flows, changedNodes, type, this.deps.registry.isKnownType, this.state.view);
    // Modules and the editor see a deploy made elsewhere exactly as one made here.
    await this.active.activate(next, snapshot.rev);
    this.log.info({ rev: { old: old.rev, new: snapshot.rev }, type }, 'flows deployed by another instance applied');
  }
}
