import type { Clock } from '../base/clock.js';
import type { Server } from 'node:http';
import type { Settings } from '../settings/settings.js';
import type { Logger } from '../base/log.js';
import type { Storage, FlowNodeConfig, InstanceRecord, RuntimeConfig } from '../storage/contract.js';
import { SerialQueue } from '../base/serial-queue.js';
import type { AuthService } from '../auth/types.js';
import { Registry, type NodeSetInfo } from '../registry/registry.js';
import type { CredentialStore } from '../credentials/store.js';
import type { CredentialKey } from '../credentials/key.js';
import { ContextManager } from './context/context.js';
import { DeliveryQueue } from './flows/delivery.js';
import { Hooks } from './red-api/hooks.js';
import { FlowSet } from './flows/flow-set.js';
import { RunState } from './deploy/run-state.js';
import { RuntimeCredentials } from './deploy/credentials.js';
import { FlowNotices } from './deploy/flow-notices.js';
import { Deployer } from './deploy/deployer.js';
import { Follower } from './cluster/follower.js';
import { RelayedEvents } from './cluster/relayed-events.js';
import { Presence } from './multiplayer/presence.js';
import { spanSocketIo } from './cluster/socket-io/relay-adapter.js';
import { nodeChannel } from './cluster/node-channel.js';
import { TypeChanges } from './deploy/type-changes.js';
import { RunControl } from './deploy/run-control.js';
import { ActiveFlows } from './deploy/active-flows.js';
import { RuntimeEvents } from './events.js';
import { History } from './history/history.js';
import { MessageStats } from './flows/stats.js';
import { LinkcallTargets } from './flows/linkcall-targets.js';
import type { RuntimeServices } from './flows/services.js';
import type { Node } from './flows/node.js';
import type { RouteApp } from './red-api/http-types.js';
import type { DeployObserver, DeployPreview, DeployRequest, DeployResult, FlowsState, RollbackRequest } from './config/deploy-types.js';
import { ModuleManager } from '../registry/modules.js';
import type { Catalogs } from '../registry/host.js';
import { NODE_RED_COMPAT_VERSION, RUNNEL_VERSION } from '../base/version.js';
import { settingsViewFor } from './red-api/settings-view.js';
import { createRedApi } from './red-api/red-api.js';
import type { ClusterChannel, NodeSets } from './red-api/red-api-types.js';
import { nodeClasses } from './flows/node-classes.js';
import { FlowTransition } from './deploy/transition.js';
import { primaryOnlyScopes } from './config/primary-only.js';
import { leftOutBy } from '../registry/load-filter.js';

/** Runtime-config key of the values nodes keep through RED.settings.set. */
const STORED_SETTINGS = 'settings';

export interface RuntimeDeps {
  settings: Settings;
  log: Logger;
  storage: Storage;
  auth: AuthService;
  httpNode: RouteApp;
  httpAdmin?: RouteApp;
  /** The built-in node sets, registered before installed modules load (which may replace their types). */
  builtinNodes: NodeSets;
  /**
   * Called once, before code the runtime does not own first runs: an installed module's or a
   * flow's nodes (the CLI starts its stop watchdog then; an empty runtime does without it).
   */
  beforeForeignCode?: () => void;
  /** The credential key while it returns one, instead of the settings' (the active project's). */
  credentialKey?: () => CredentialKey | undefined;
  /** The clock automatic module installs wait on between attempts (tests move their own). */
  clock?: Clock;
}

/**
 * The runtime facade the admin API calls. It builds the parts that keep storage, credentials and
 * the running flows in step (deployer, follower, run control, type changes) around one deploy lock
 * and one RunState, and loads and starts them in order. It knows nothing about HTTP.
 */
export class Runtime {
  readonly settings: Settings;
  readonly log: Logger;
  readonly storage: Storage;
  readonly auth: AuthService;
  readonly version = RUNNEL_VERSION;
  readonly registry = new Registry(nodeClasses);
  readonly modules: ModuleManager;
  readonly events: RuntimeEvents;
  readonly httpNode: RouteApp;
  readonly httpAdmin: RouteApp | undefined;
  readonly context: ContextManager;
  readonly services: RuntimeServices;
  readonly history: History;
  server: Server | undefined;
  readonly clock: Clock | undefined;
  private readonly flowSet: FlowSet;
  private readonly builtinNodes: NodeSets;
  private beforeForeignCode: (() => void) | undefined;
  private readonly mutex = new SerialQueue();
  private readonly state: RunState;
  /** From construction until the stored flows have started, and while a deploy stops and starts nodes. */
  private readonly transition = new FlowTransition();
  private loading: Promise<void> | undefined;
  private readonly nodeCredentials: RuntimeCredentials;
  private readonly notices: FlowNotices;
  /** The running configuration's one writer; the parts below change the running flows through it. */
  private readonly active: ActiveFlows;
  private readonly deployer: Deployer;
  private readonly follower: Follower;
  /** RED.cluster: with shared storage, config nodes reach their counterparts on the other instances. */
  readonly cluster: ClusterChannel | undefined;
  /** With shared storage: the editors of every instance see the others' debug output, statuses and warnings. */
  private readonly relayed: RelayedEvents | undefined;
  /** Multiplayer presence in the editors (editorTheme.multiplayer.enabled), across the cluster with shared storage. */
  readonly presence: Presence | undefined;
  private readonly typeChanges: TypeChanges;
  private readonly runControl: RunControl;

  constructor(deps: RuntimeDeps) {
    this.settings = deps.settings;
    this.log = deps.log;
    this.storage = deps.storage;
    this.auth = deps.auth;
    this.httpNode = deps.httpNode;
    this.httpAdmin = deps.httpAdmin;
    this.events = new RuntimeEvents(this.log);
    this.history = new History(deps.storage);
    this.builtinNodes = deps.builtinNodes;
    this.beforeForeignCode = deps.beforeForeignCode;
    const shared = deps.storage.shared;
    this.clock = deps.clock;
    this.context = new ContextManager({
      functionGlobalContext: this.settings.functionGlobalContext,
      exportGlobalContextKeys: this.settings.extra.exportGlobalContextKeys !== false,
      contextStorage: this.settings.contextStorage,
      userDir: this.settings.userDir,
      log: this.log,
      // A primary-only tab's context is written with the primary's lease: a deposed primary's late write is refused.
      shared: shared && { context: shared.context, onChange: (listener) => shared.onChange(listener), primaryOnly: primaryOnlyScopes(() => this.state.active.flows) },
    });
    this.services = {
      settings: this.settings,
      log: this.log,
      queue: new DeliveryQueue(this.settings.messageQueueLimit, (queue) => this.onQueueOverflow(queue)),
      context: this.context,
      registry: this.registry,
      hooks: new Hooks(),
      events: this.events,
      nodes: new Map<string, Node>(),
      linkcallTargets: new LinkcallTargets(),
      stats: new MessageStats(this.settings.metrics.enabled),
      credentialsFor: (id, type, env) => this.nodeCredentials.credentialsFor(id, type, env),
      getGlobalSetting: (name) => this.flowSet.globalEnv.getSetting(name),
      beforeNodeCode: () => {
        const first = this.beforeForeignCode;
        this.beforeForeignCode = undefined;
        first?.();
      },
    };
    this.flowSet = new FlowSet(this.services);
    this.modules = new ModuleManager(this);
    this.state = new RunState(this.registry.isKnownType, { safeMode: deps.settings.safeMode, primary: deps.storage.shared === undefined });
    this.nodeCredentials = new RuntimeCredentials({ settings: this.settings, log: this.log, storage: this.storage, registry: this.registry, mutex: this.mutex, state: this.state, keyOverride: deps.credentialKey });
    this.notices = new FlowNotices(this.events, this.state, this.flowSet, this.nodeCredentials);
    const active = new ActiveFlows({
      events: this.events, moduleHost: this, mutex: this.mutex, transition: this.transition, flowSet: this.flowSet, state: this.state, notices: this.notices,
    });
    this.active = active;
    const { storage, log, registry, state } = this;
    const credentials = this.nodeCredentials;
    this.runControl = new RunControl({ active, state, settings: this.settings, storage, log, events: this.events, notices: this.notices, flowSet: this.flowSet, credentials });
    this.deployer = new Deployer({
      active, state, storage, log, registry, credentials, flowSet: this.flowSet, nodes: this.services.nodes, followStored: () => this.follower.followStored(),
    });
    const instance = { settings: this.settings, version: this.version, modules: this.modules, flowsState: () => this.runControl.getState().state };
    this.follower = new Follower({ active, state, storage, log, registry, credentials, instance, flowSet: this.flowSet });
    const maxLength = this.settings.extra.debugMaxLength;
    if (storage.shared) {
      const nodes = this.services.nodes;
      this.relayed = new RelayedEvents({
        relay: storage.shared.relay, events: this.events, runsHere: (id) => nodes.has(id), primaryOnly: primaryOnlyScopes(() => state.active.flows),
        debugMaxLength: typeof maxLength === 'number' ? maxLength : 1000,
      });
      this.relayed.start();
    }
    this.cluster = storage.shared ? nodeChannel(storage.shared.relay) : undefined;
    const multiplayer = this.settings.editorTheme.multiplayer;
    if (multiplayer !== null && typeof multiplayer === 'object' && (multiplayer as { enabled?: unknown }).enabled === true) {
      this.presence = new Presence({
        send: (message) => this.events.emit('comms', message), log,
        ...(storage.shared ? { cluster: { relay: storage.shared.relay, self: storage.shared.instanceId } } : {}),
      });
      this.presence.start();
    }
    this.transition.begin();
    this.typeChanges = new TypeChanges({ active, state, events: this.events, notices: this.notices, registry });
  }

  /**
   * A message loop that fans out (a node wired twice to itself) doubles the queue at every pass:
   * rather than let it take the process's memory, the tab with most messages waiting is stopped,
   * its messages dropped, and the reason kept in GET /flows/state until a deploy restarts the tab.
   */
  private onQueueOverflow(queue: DeliveryQueue): void {
    const [top] = queue.tabsByDepth();
    if (!top) return;
    const [tab, waiting] = top;
    const label = this.flowSet.flows.get(tab)?.config?.label;
    const error = `stopped: ${waiting} messages were waiting for delivery, over messageQueueLimit (${this.settings.messageQueueLimit}); a message loop? Deploy the flow again to restart it`;
    if (!this.flowSet.halt(tab, error)) {
      // Not a running tab (config nodes of the global flow): the flood is dropped, nothing to stop.
      queue.clear();
      this.log.error({ flow: tab, waiting }, `Message queue over messageQueueLimit: dropped ${waiting} messages`);
      return;
    }
    this.log.error({ flow: tab, label, waiting }, `Flow ${label ? `"${label}" ` : ''}(${tab}) ${error}`);
    void this.active.exclusive(() => this.flowSet.stopHalted(tab)).catch((err: unknown) => this.log.error({ err, flow: tab }, 'stopping a flooding flow failed'));
  }

  /** The RED object one node set's code receives. */
  redApiFor(set: NodeSetInfo, options: { moduleDir: string; catalogs: Catalogs }): unknown {
    // The set's own code runs next.
    this.services.beforeNodeCode();
    return createRedApi(this, set, options);
  }

  private registerBuiltinNodes(): void {
    const { module, sets, version, files = {} } = this.builtinNodes;
    this.registry.addModule({ name: module, version: version ?? RUNNEL_VERSION, builtin: true });
    for (const [name, register] of Object.entries(sets)) {
      // As Node-RED, a core file left out is not loaded at all: its set is not even listed. Runnel's
      // own sets have no Node-RED file for a Node-RED settings file to name: they always load.
      if (files[name] !== undefined && leftOutBy(this.settings, files[name]) !== undefined) continue;
      register(createRedApi(this, this.registry.addSet(module, name)));
    }
  }

  /** Read-modify-write of the runtime config as one step (module records, RED.settings.set). */
  async updateRuntimeConfig(change: (config: RuntimeConfig) => RuntimeConfig): Promise<void> {
    await this.storage.updateRuntimeConfig(change);
  }

  /** The deployed nodes' credentials; set by `load`. */
  get credentials(): CredentialStore {
    return this.nodeCredentials.store;
  }

  get credentialKey(): CredentialKey {
    return this.nodeCredentials.key;
  }

  attachServer(server: Server): void {
    this.server = server;
    const shared = this.storage.shared;
    if (!shared) return;
    spanSocketIo(server, shared.relay, { self: shared.instanceId, urlOf: (id) => this.follower.urlOf(id) }, this.log);
  }

  /**
   * Loads node types, credentials and the stored flows without starting them. From here on the
   * admin API can answer (Node-RED listens at this point too), while `start` starts the nodes.
   */
  load(): Promise<void> {
    return (this.loading ??= this.loadAll());
  }

  private async loadAll(): Promise<void> {
    // Persistent context is loaded before any node can read it.
    await this.context.open();
    await this.nodeCredentials.open();
    const stored = (await this.storage.getRuntimeConfig())[STORED_SETTINGS];
    settingsViewFor(this.settings, NODE_RED_COMPAT_VERSION).attachStore(
      stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {},
      (values) => this.updateRuntimeConfig((config) => ({ ...config, [STORED_SETTINGS]: values })),
    );
    this.registerBuiltinNodes();
    await this.modules.loadInstalled();
    await this.runControl.loadStoppedState();
    // Instances sharing storage must share the key: one that cannot read the credentials would
    // run the flows without them and overwrite them at its first deploy.
    await this.active.exclusive(async () => this.active.load(await this.deployer.readStored(true)));
  }

  /** Loads (if `load` has not) and starts the stored flows, then follows the other instances. */
  async start(): Promise<void> {
    try {
      await this.load();
      await this.runControl.startLoaded();
    } finally {
      this.transition.end();
    }
    this.follower.start();
  }

  /**
   * With shared storage: runs the flows another instance stored last, if this one does not yet (its
   * notice still on the way). Whoever reads the running flows as the deployed ones waits for this.
   */
  async catchUp(): Promise<void> {
    const shared = this.storage.shared;
    if (shared && (await shared.currentRev()).rev !== this.state.active.rev) await this.follower.follow();
  }

  /** GET /cluster: the live instances (just this one without shared storage). */
  clusterView(): Promise<InstanceRecord[]> {
    return this.follower.clusterView();
  }

  /**
   * While the flows are not started yet or a deploy is stopping and starting nodes: resolves when
   * they run again. undefined when nothing is under way. The HTTP layer holds requests that find
   * no route until then.
   */
  get flowsPending(): Promise<void> | undefined {
    return this.transition.pending;
  }

  /** Whether POST /flows/state exists (Node-RED's `runtimeState.enabled`, or safe mode). */
  get runtimeStateEnabled(): boolean {
    return this.runControl.runtimeStateEnabled;
  }

  /** POST /flows/state: stops every flow or starts them again; a stop survives a restart. */
  setFlowsState(state: 'start' | 'stop', who: { user?: string; reqId?: string }): Promise<void> {
    return this.runControl.setFlowsState(state, who);
  }

  async stop(): Promise<void> {
    this.modules.stop();
    this.relayed?.stop();
    this.presence?.stop();
    await this.follower.stop();
    await this.active.exclusive(async () => {
      this.state.started = false;
      await this.nodeCredentials.flush();
      await this.runControl.stopFlows();
      await this.context.close();
    });
  }

  get rev(): string {
    return this.state.active.rev;
  }

  getFlows(): { flows: FlowNodeConfig[]; rev: string } {
    return { flows: this.state.active.flows, rev: this.state.active.rev };
  }

  /**
   * GET /flows bodies, serialised and encoded once per rev: the 10,000-node config is megabytes of
   * JSON, and every request would otherwise stringify and UTF-8 encode it again.
   */
  getFlowsJson(version: 'v1' | 'v2'): Buffer {
    const a = this.state.active;
    a.json ??= JSON.stringify(a.flows);
    if (version === 'v1') return (a.v1 ??= Buffer.from(a.json));
    return (a.v2 ??= Buffer.from(`{"flows":${a.json},"rev":${JSON.stringify(a.rev)}}`));
  }

  /** GET /flows/state. */
  getState(): FlowsState {
    return this.runControl.getState();
  }

  /** Applies a deploy. Resolves after the new configuration is saved and its nodes have started. */
  deploy(req: DeployRequest): Promise<DeployResult> {
    return this.deployer.deploy(req);
  }

  /** Since when (epoch ms) the deploy under way has been running; undefined when none is. */
  get deployingSince(): number | undefined {
    return this.deployer.deployingSince;
  }

  /** Called after every deploy, rollback and single-flow edit with its outcome and duration. */
  observeDeploys(observer: DeployObserver): void {
    this.deployer.observeDeploys(observer);
  }

  /** A deploy computed from the active configuration inside the deploy lock (the single-flow API). */
  editFlows(change: (flows: FlowNodeConfig[]) => FlowNodeConfig[], req: Omit<DeployRequest, 'flows' | 'rev'>): Promise<DeployResult> {
    return this.deployer.editFlows(change, req);
  }

  /**
   * Deploys another stored configuration as a reload (a project switch, a pull, a branch checkout):
   * `retarget` runs while the nodes are stopped, then the credential key is resolved again and,
   * with `clearContext`, every context value is dropped before the new flows start.
   */
  reopen(retarget: () => Promise<void>, clearContext: boolean, who: { user?: string; ip?: string; reqId?: string }): Promise<DeployResult> {
    return this.deploy({
      flows: [],
      type: 'reload',
      ...who,
      beforeRead: async () => {
        await retarget();
        await this.nodeCredentials.open();
        if (clearContext) await this.context.clearAll();
      },
    });
  }

  /** Deploys a kept revision (flows and its credentials) as a new revision. */
  rollback(req: RollbackRequest): Promise<DeployResult> {
    return this.deployer.rollback(req);
  }

  /** What a deploy of `req` would do, computed by the deploy's own planning; changes nothing. */
  preview(req: DeployRequest): Promise<DeployPreview> {
    return this.deployer.preview(req);
  }

  /** Restarts the deployed nodes of the given types on their new code (a module upgraded in place). */
  restartNodesOfTypes(types: ReadonlySet<string>): Promise<string[]> {
    return this.typeChanges.restartNodesOfTypes(types);
  }

  /** The current `runtime-state` notification (retained for editors that connect later). */
  get stateNotice(): Record<string, unknown> {
    return this.notices.stateNotice;
  }

  /** RED.nodes.addCredentials / deleteCredentials: change one node's credentials and persist soon. */
  updateNodeCredentials(id: string, value: Record<string, unknown> | undefined): void {
    this.nodeCredentials.update(id, value);
  }
}
