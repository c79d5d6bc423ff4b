import type { Settings } from '../settings.js';
import type { Logger } from '../log.js';
import type { InstanceRecord, Storage } from '../storage/types.js';
import type { SerialQueue } from '../storage/serial-queue.js';
import type { Registry } from '../registry/registry.js';
import type { ModuleManager } from '../registry/modules.js';
import { ensureFlowModules, type ExternalModulesHost } from '../registry/external-modules.js';
import type { RuntimeEvents } from './events.js';
import type { FlowSet } from './flow-set.js';
import { planDeploy } from './deploy-plan.js';
import type { FlowTransition } from './transition.js';
import type { RunState } from './run-state.js';
import type { RuntimeCredentials } from './credentials.js';
import type { FlowNotices } from './flow-notices.js';
import { ClusterMember } from './cluster-member.js';
import { primaryOnlyIds } from './primary-only.js';
import { DEPLOYMENT_TYPES, type DeploymentType, type FlowsState } from './types.js';

export interface FollowerDeps {
  settings: Settings;
  log: Logger;
  storage: Storage;
  events: RuntimeEvents;
  registry: Pick<Registry, 'isKnownType'>;
  /** What installs the npm modules function nodes list, before their flows start. */
  moduleHost: ExternalModulesHost;
  modules: Pick<ModuleManager, 'sync' | 'states'>;
  /** The deploy lock: what another instance deployed is applied in it, never inside a local deploy. */
  mutex: SerialQueue;
  transition: FlowTransition;
  flowSet: FlowSet;
  state: RunState;
  credentials: RuntimeCredentials;
  notices: FlowNotices;
  version: string;
  /** GET /flows/state's `state`, which GET /cluster reports for this instance. */
  flowsState: () => FlowsState['state'];
}

/**
 * Cluster following: with shared storage, applies what other instances deploy, keeps the module
 * list in step, and starts or stops primary-only tabs as this instance gains or loses the role.
 */
export class Follower {
  private readonly settings: Settings;
  private readonly log: Logger;
  private readonly storage: Storage;
  private readonly events: RuntimeEvents;
  private readonly registry: Pick<Registry, 'isKnownType'>;
  private readonly moduleHost: ExternalModulesHost;
  private readonly modules: Pick<ModuleManager, 'sync' | 'states'>;
  private readonly mutex: SerialQueue;
  private readonly transition: FlowTransition;
  private readonly flowSet: FlowSet;
  private readonly state: RunState;
  private readonly credentials: RuntimeCredentials;
  private readonly notices: FlowNotices;
  private readonly version: string;
  private readonly flowsState: () => FlowsState['state'];
  private followQueued: Promise<void> | undefined;
  private unfollow: (() => void) | undefined;
  private member: ClusterMember | undefined;

  constructor(deps: FollowerDeps) {
    this.settings = deps.settings;
    this.log = deps.log;
    this.storage = deps.storage;
    this.events = deps.events;
    this.registry = deps.registry;
    this.moduleHost = deps.moduleHost;
    this.modules = deps.modules;
    this.mutex = deps.mutex;
    this.transition = deps.transition;
    this.flowSet = deps.flowSet;
    this.state = deps.state;
    this.credentials = deps.credentials;
    this.notices = deps.notices;
    this.version = deps.version;
    this.flowsState = deps.flowsState;
  }

  /** Follows the instances sharing the storage (none without it): their deploys, module changes and the primary role. */
  start(): void {
    const shared = this.storage.shared;
    if (!shared) return;
    const sync = this.modules.sync;
    const reconcile = (retry: boolean) => void sync?.reconcile(retry).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'reading the shared module list failed'));
    this.unfollow = shared.onChange((change) => {
      if (change.kind === 'modules' || change.kind === 'resync') reconcile(change.kind === 'resync');
      if (change.kind !== 'flows' && change.kind !== 'resync') return;
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
  async clusterView(): Promise<InstanceRecord[]> {
    if (this.member) return this.member.instances();
    return [{ id: this.settings.instanceId ?? 'local', ...this.describeInstance(true), lastSeen: new Date().toISOString() }];
  }

  private describeInstance(primary: boolean): Omit<InstanceRecord, 'id' | 'lastSeen'> {
    return { url: this.settings.instanceUrl ?? null, version: this.version, rev: this.state.active.rev, state: this.flowsState(), primary, modules: this.modules.states() };
  }

  /** Starts or stops the primary-only tabs as this instance gains or loses the primary role. */
  private setPrimary(primary: boolean): Promise<void> {
    return this.mutex.run(async () => {
      if (this.state.primary === primary) return;
      this.state.primary = primary;
      if (!this.state.started) return;
      const affected = primaryOnlyIds(this.state.active.flows);
      this.state.active.parsed = this.state.parse(this.state.active.flows);
      if (affected.size > 0) await this.transition.during(() => this.flowSet.apply(this.state.active.parsed, primary ? new Set() : affected));
    });
  }

  /**
   * Applies the configuration another instance saved, restarting what the deployment type it was
   * deployed with restarts. Runs in the deploy queue, so it never interleaves with a local deploy.
   */
  private follow(): Promise<void> {
    // Notifications arriving while one is queued are covered by it: it reads the newest rev.
    this.followQueued ??= this.mutex.run(async () => {
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
    const before = new Map([...ids].map((id) => [id, JSON.stringify(this.credentials.store.get(id))]));
    await this.credentials.store.load(snapshot.credentials);
    const changedNodes = new Set([...ids].filter((id) => JSON.stringify(this.credentials.store.get(id)) !== before.get(id)));
    const stored = (DEPLOYMENT_TYPES as readonly string[]).includes(snapshot.type ?? '') ? (snapshot.type as DeploymentType) : 'full';
    const type = stored === 'reload' ? 'full' : stored;
    const next = planDeploy(old.parsed, snapshot.flows, changedNodes, type, this.registry.isKnownType, this.state.view);
    this.state.active = { flows: snapshot.flows, parsed: next.parsed, rev: snapshot.rev, json: next.json };
    await this.transition.during(async () => {
      await ensureFlowModules(this.moduleHost, next.parsed.all.values());
      // Modules and the editor see a deploy made elsewhere exactly as one made here.
      this.notices.emitFlows('stopping', next.type, next.diff);
      await this.flowSet.apply(next.parsed, next.stop, next.rewired, () => {
        this.notices.emitStopped(next.type, next.diff, true);
        this.notices.emitFlows('starting', next.type, next.diff);
      });
    });
    this.notices.emitStarted(next.type, next.diff, true);
    this.events.emit('runtime-event', { id: 'runtime-deploy', payload: { revision: snapshot.rev }, retain: true });
    this.log.info({ rev: { old: old.rev, new: snapshot.rev }, type }, 'flows deployed by another instance applied');
  }
}
