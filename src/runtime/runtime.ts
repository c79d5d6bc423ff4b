import { performance } from 'node:perf_hooks';
import type { Server } from 'node:http';
import type { Settings } from '../settings.js';
import type { Logger } from '../log.js';
import type { Storage, FlowNodeConfig, InstanceRecord, RevisionMeta, RuntimeConfig } from '../storage/types.js';
import { SerialQueue } from '../storage/serial-queue.js';
import { storedCredentialsName } from '../storage/index.js';
import type { AuthService } from '../auth/types.js';
import { RunnelError } from '../errors.js';
import { Registry, type NodeSetInfo } from '../registry/registry.js';
import { CredentialStore, type CredentialPlan } from '../credentials/store.js';
import { resolveCredentialKey, secretNeeded, type CredentialKey } from '../credentials/key.js';
import { ContextManager } from './context.js';
import { DeliveryQueue } from './delivery.js';
import { Hooks } from './hooks.js';
import { FlowSet } from './flow-set.js';
import { parseConfig, type ParsedConfig } from './config.js';
import type { ConfigDiff } from './diff.js';
import { RuntimeEvents } from './events.js';
import { planDeploy } from './deploy-plan.js';
import { summarise, type NodeTexts } from './history/compare.js';
import { History } from './history/history.js';
import { MessageStats } from './stats.js';
import { substituteEnv } from './env/env.js';
import type { RuntimeServices } from './services.js';
import type { Node } from './node.js';
import type { RouteApp } from './http-types.js';
import { DEPLOYMENT_TYPES, type DeployObserver, type DeployOutcome, type DeployPreview, type DeployRequest, type DeployResult, type DeploymentType, type FlowsState, type RollbackRequest } from './types.js';
import { ModuleManager } from '../registry/modules.js';
import { ensureFlowModules } from '../registry/external-modules.js';
import type { Catalogs } from '../registry/host.js';
import { NODE_RED_COMPAT_VERSION, RUNNEL_VERSION } from '../version.js';
import { settingsViewFor } from './settings-view.js';
import { createRedApi } from './red-api.js';
import type { NodeSets } from './red-api-types.js';
import { nodeClasses } from './node-classes.js';
import { ClusterMember } from './cluster-member.js';
import { primaryOnlyIds, primaryView } from './primary-only.js';
import { FlowTransition } from './transition.js';

const EMPTY_DIFF: ConfigDiff = {
  added: new Set(), changed: new Set(), removed: new Set(), rewired: new Set(), linked: new Set(), flowChanged: new Set(), globalConfigChanged: false,
};
/** Node-RED's diff when stopping without a new configuration (shut-down, reload). */
const noDiff = () => EMPTY_DIFF;

function diffArrays(d: ConfigDiff): Record<string, unknown> {
  return {
    added: [...d.added], changed: [...d.changed], removed: [...d.removed], rewired: [...d.rewired],
    linked: [...d.linked], flowChanged: [...d.flowChanged], globalConfigChanged: d.globalConfigChanged,
  };
}

/** Runtime-config key of the values nodes keep through RED.settings.set. */
const STORED_SETTINGS = 'settings';
/** The retained runtime-state event of safe mode, as Node-RED sends it (the editor shows its warning). */
const SAFE_MODE_STATE = { state: 'safe', error: 'safe-mode', type: 'warning', text: 'notification.warnings.safe-mode' };
/** Runtime-config key of the flows state set through POST /flows/state (Node-RED's name). */
const FLOW_STATE = 'runtimeFlowState';

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
}

interface ActiveConfig {
  flows: FlowNodeConfig[];
  parsed: ParsedConfig;
  rev: string;
  /** `JSON.stringify(flows)`, when a deploy already made it. */
  json?: string;
  /** Encoded GET /flows bodies for this rev, built on first request. */
  v1?: Buffer;
  v2?: Buffer;
}

/**
 * The runtime facade the admin API calls: it owns the active configuration, serialises deploys,
 * and keeps storage, credentials and the running flows in step. It knows nothing about HTTP.
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
  credentials!: CredentialStore;
  credentialKey!: CredentialKey;
  private readonly flowSet: FlowSet;
  private readonly builtinNodes: NodeSets;
  private beforeForeignCode: (() => void) | undefined;
  private readonly mutex = new SerialQueue();
  private active: ActiveConfig;
  private started = false;
  /** Safe mode: the flows are loaded, not started, until a deploy or POST /flows/state starts them. */
  private safeMode: boolean;
  private restartScheduled = false;
  private credentialSave: NodeJS.Timeout | undefined;
  private deployStarted: number | undefined;
  private readonly deployObservers: DeployObserver[] = [];
  private followQueued: Promise<void> | undefined;
  private unfollow: (() => void) | undefined;
  private member: ClusterMember | undefined;
  /** Whether primary-only tabs run here: always for a single instance, for the elected one in a cluster. */
  private primary: boolean;
  /** From construction until the stored flows have started, and while a deploy stops and starts nodes. */
  private readonly transition = new FlowTransition();
  private loading: Promise<void> | undefined;
  private stoppedByOperator = false;
  /** The stored credentials did not decrypt at start: the editor is warned until a deploy replaces them. */
  private credentialsUnreadable = false;
  /** The last `runtime-state` notification, for whoever starts listening later (the editor's /comms). */
  private lastStateNotice: Record<string, unknown> = { state: 'stop', deploy: false };

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
    this.safeMode = deps.settings.safeMode;
    this.context = new ContextManager({
      functionGlobalContext: this.settings.functionGlobalContext,
      exportGlobalContextKeys: this.settings.extra.exportGlobalContextKeys !== false,
      contextStorage: this.settings.contextStorage,
      userDir: this.settings.userDir,
      log: this.log,
      shared: deps.storage.shared,
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
      stats: new MessageStats(this.settings.metrics.enabled),
      credentialsFor: (id, type, env) => this.credentialsFor(id, type, env),
      getGlobalSetting: (name) => this.flowSet.globalEnv.getSetting(name),
      beforeNodeCode: () => {
        const first = this.beforeForeignCode;
        this.beforeForeignCode = undefined;
        first?.();
      },
    };
    this.flowSet = new FlowSet(this.services);
    this.modules = new ModuleManager(this);
    this.primary = deps.storage.shared === undefined;
    this.active = { flows: [], parsed: parseConfig([], this.registry.isKnownType), rev: '' };
    this.transition.begin();
    // A type arriving (module install, enable) may let waiting flows start.
    // Deployed nodes of a type whose implementation changed restart on the new code.
    this.registry.on('type-replaced', (type: string) => {
      if (this.started) void this.restartNodesOfTypes(new Set([type]));
    });
    this.registry.on('type-registered', (type: string) => {
      this.events.emit('type-registered', type);
      this.scheduleStartWaiting();
    });
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
    void this.mutex.run(() => this.flowSet.stopHalted(tab)).catch((err: unknown) => this.log.error({ err, flow: tab }, 'stopping a flooding flow failed'));
  }

  /** The RED object one node set's code receives. */
  redApiFor(set: NodeSetInfo, options: { moduleDir: string; catalogs: Catalogs }): unknown {
    // The set's own code runs next.
    this.services.beforeNodeCode();
    return createRedApi(this, set, options);
  }

  private registerBuiltinNodes(): void {
    const { module, sets, version } = this.builtinNodes;
    this.registry.addModule({ name: module, version: version ?? RUNNEL_VERSION, builtin: true });
    for (const [name, register] of Object.entries(sets)) register(createRedApi(this, this.registry.addSet(module, name)));
  }

  /** Read-modify-write of the runtime config as one step (module records, RED.settings.set). */
  async updateRuntimeConfig(change: (config: RuntimeConfig) => RuntimeConfig): Promise<void> {
    await this.storage.updateRuntimeConfig(change);
  }

  attachServer(server: Server): void {
    this.server = server;
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
    this.credentialKey = await resolveCredentialKey(this.settings, this.storage, this.log, storedCredentialsName(this.settings));
    this.credentials = new CredentialStore({
      key: this.credentialKey,
      definitionOf: this.registry.getCredentialDefinition,
      log: this.log,
      storage: this.storage,
    });
    const stored = (await this.storage.getRuntimeConfig())[STORED_SETTINGS];
    settingsViewFor(this.settings, NODE_RED_COMPAT_VERSION).attachStore(
      stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {},
      (values) => this.updateRuntimeConfig((config) => ({ ...config, [STORED_SETTINGS]: values })),
    );
    this.registerBuiltinNodes();
    await this.modules.loadInstalled();
    this.stoppedByOperator = this.runtimeStateEnabled && (await this.storage.getRuntimeConfig())[FLOW_STATE] === 'stop';
    // Instances sharing storage must share the key: one that cannot read the credentials would
    // run the flows without them and overwrite them at its first deploy.
    await this.mutex.run(() => this.loadFromStorage(true));
  }

  /** Loads (if `load` has not) and starts the stored flows, then follows the other instances. */
  async start(): Promise<void> {
    try {
      await this.load();
      await this.mutex.run(async () => {
        if (this.safeMode) {
          this.log.info('Flows stopped in safe mode. Deploy to start.');
          this.events.emit('runtime-event', { id: 'runtime-state', payload: SAFE_MODE_STATE, retain: true });
          return;
        }
        if (this.stoppedByOperator) {
          this.log.info('Flows stopped through POST /flows/state: loaded, not started');
          this.noticeState('stop', false);
          return;
        }
        // POST /flows/state may have started them since load.
        if (!this.started) await this.runFlows();
      });
    } finally {
      this.transition.end();
    }
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

  /**
   * While the flows are not started yet or a deploy is stopping and starting nodes: resolves when
   * they run again. undefined when nothing is under way. The HTTP layer holds requests that find
   * no route until then.
   */
  get flowsPending(): Promise<void> | undefined {
    return this.transition.pending;
  }

  /** GET /cluster: the live instances (just this one without shared storage). */
  async clusterView(): Promise<InstanceRecord[]> {
    if (this.member) return this.member.instances();
    return [{ id: this.settings.instanceId ?? 'local', ...this.describeInstance(true), lastSeen: new Date().toISOString() }];
  }

  private describeInstance(primary: boolean): Omit<InstanceRecord, 'id' | 'lastSeen'> {
    return { url: this.settings.instanceUrl ?? null, version: this.version, rev: this.active.rev, state: this.getState().state, primary, modules: this.modules.states() };
  }

  /** Starts or stops the primary-only tabs as this instance gains or loses the primary role. */
  private setPrimary(primary: boolean): Promise<void> {
    return this.mutex.run(async () => {
      if (this.primary === primary) return;
      this.primary = primary;
      if (!this.started) return;
      const affected = primaryOnlyIds(this.active.flows);
      this.active.parsed = this.parse(this.active.flows);
      if (affected.size > 0) await this.transition.during(() => this.flowSet.apply(this.active.parsed, primary ? new Set() : affected));
    });
  }

  /** What this instance runs of `flows`: primary-only tabs are disabled off the primary. */
  private view = (flows: FlowNodeConfig[]): FlowNodeConfig[] => primaryView(flows, this.primary);

  private parse(flows: FlowNodeConfig[]): ParsedConfig {
    return parseConfig(this.view(flows), this.registry.isKnownType);
  }

  /**
   * Applies the configuration another instance saved, restarting what the deployment type it was
   * deployed with restarts. Runs in the deploy queue, so it never interleaves with a local deploy.
   */
  follow(): Promise<void> {
    // Notifications arriving while one is queued are covered by it: it reads the newest rev.
    this.followQueued ??= this.mutex.run(async () => {
      this.followQueued = undefined;
      if (this.started) await this.followStored();
    });
    return this.followQueued;
  }

  private async followStored(): Promise<void> {
    const snapshot = await this.storage.getFlows();
    if (snapshot.rev === this.active.rev) return;
    const old = this.active;
    const ids = new Set([...old.parsed.all.keys(), ...snapshot.flows.map((n) => n.id)]);
    const before = new Map([...ids].map((id) => [id, JSON.stringify(this.credentials.get(id))]));
    await this.credentials.load(snapshot.credentials);
    const changedNodes = new Set([...ids].filter((id) => JSON.stringify(this.credentials.get(id)) !== before.get(id)));
    const stored = (DEPLOYMENT_TYPES as readonly string[]).includes(snapshot.type ?? '') ? (snapshot.type as DeploymentType) : 'full';
    const type = stored === 'reload' ? 'full' : stored;
    const next = planDeploy(old.parsed, snapshot.flows, changedNodes, type, this.registry.isKnownType, this.view);
    this.active = { flows: snapshot.flows, parsed: next.parsed, rev: snapshot.rev, json: next.json };
    await this.transition.during(async () => {
      await ensureFlowModules(this, next.parsed.all.values());
      // Modules and the editor see a deploy made elsewhere exactly as one made here.
      this.emitFlows('stopping', next.type, next.diff);
      await this.flowSet.apply(next.parsed, next.stop, next.rewired, () => {
        this.emitStopped(next.type, next.diff, true);
        this.emitFlows('starting', next.type, next.diff);
      });
    });
    this.emitStarted(next.type, next.diff, true);
    this.events.emit('runtime-event', { id: 'runtime-deploy', payload: { revision: snapshot.rev }, retain: true });
    this.log.info({ rev: { old: old.rev, new: snapshot.rev }, type }, 'flows deployed by another instance applied');
  }

  /**
   * Node-RED's `runtimeState.enabled`: POST /flows/state exists, and a stop survives restarts. In
   * safe mode the route exists too, so the flows can be started without a deploy.
   */
  get runtimeStateEnabled(): boolean {
    const runtimeState = this.settings.extra.runtimeState as { enabled?: unknown } | undefined;
    return runtimeState?.enabled === true || this.settings.safeMode;
  }

  /**
   * POST /flows/state: stops every flow (deploys then save without starting) or starts them again.
   * The state is kept in the runtime config, so a stop survives a restart.
   */
  setFlowsState(state: 'start' | 'stop', who: { user?: string; reqId?: string }): Promise<void> {
    return this.mutex.run(async () => {
      this.safeMode = false;
      if (state === 'start' && !this.started) await this.runFlows();
      else if (state === 'stop' && this.started) {
        this.started = false;
        this.emitFlows('stopping', 'full', noDiff);
        await this.flowSet.stopAll();
        this.emitStopped('full', noDiff, false);
      }
      await this.updateRuntimeConfig((config) => ({ ...config, [FLOW_STATE]: state }));
      this.log.audit({ event: 'flows.state', state, user: who.user, reqId: who.reqId }, `flows ${state === 'start' ? 'started' : 'stopped'}`);
    });
  }

  private runFlows(): Promise<void> {
    return this.transition.during(async () => {
      await ensureFlowModules(this, this.active.parsed.all.values());
      this.emitFlows('starting', 'full');
      await this.flowSet.apply(this.active.parsed, 'all');
      this.started = true;
      this.emitStarted('full', undefined, false);
    });
  }

  async stop(): Promise<void> {
    this.unfollow?.();
    await this.member?.stop();
    await this.mutex.run(async () => {
      this.started = false;
      await this.flushCredentials();
      this.emitFlows('stopping', 'full', noDiff);
      await this.flowSet.stopAll();
      this.emitStopped('full', noDiff, false);
      await this.context.close();
    });
  }

  get rev(): string {
    return this.active.rev;
  }

  getFlows(): { flows: FlowNodeConfig[]; rev: string } {
    return { flows: this.active.flows, rev: this.active.rev };
  }

  /**
   * GET /flows bodies, serialised and encoded once per rev: the 10,000-node config is megabytes of
   * JSON, and every request would otherwise stringify and UTF-8 encode it again.
   */
  getFlowsJson(version: 'v1' | 'v2'): Buffer {
    const a = this.active;
    a.json ??= JSON.stringify(a.flows);
    if (version === 'v1') return (a.v1 ??= Buffer.from(a.json));
    return (a.v2 ??= Buffer.from(`{"flows":${a.json},"rev":${JSON.stringify(a.rev)}}`));
  }

  getState(): FlowsState {
    // Node-RED's word while safe mode holds the flows back, until a deploy or POST /flows/state starts them.
    const state: FlowsState = { state: this.started ? 'start' : this.safeMode ? 'safe' : 'stop' };
    // Instances sharing storage may briefly run different revs: each says which it runs.
    if (this.storage.shared) state.rev = this.active.rev;
    if (this.flowSet.missingTypes.length) state.missingTypes = [...this.flowSet.missingTypes];
    if (this.flowSet.errors.size || this.credentialsUnreadable) state.errors = [...this.flowSet.errors.values()];
    if (this.credentialsUnreadable) state.errors!.push({ id: 'credentials', type: 'credentials', error: this.credentialsProblem() });
    return state;
  }

  /** Why the stored credentials are not used, and the two ways out, in the user's terms. */
  private credentialsProblem(): string {
    const key = {
      user: 'the credentialSecret of the settings',
      system: 'the key generated in .config.runtime.json (credentialSecret is not set)',
      disabled: 'no key: credentialSecret is false',
    }[this.credentialKey.type];
    const file = this.storage.credentialsFile;
    const reset = file ? `, or delete ${file} to start without credentials` : '';
    return `The stored credentials do not decrypt with ${key}: the flows run without them, and the next deploy replaces them. ` +
      `Set credentialSecret to the key that encrypted them and restart${reset}`;
  }

  /** Applies a deploy. Resolves after the new configuration is saved and its nodes have started. */
  deploy(req: DeployRequest): Promise<DeployResult> {
    return this.exclusive(req.type, async () => {
      if (req.type === 'reload') return this.reload(req);
      this.checkRev(req.rev);
      try {
        return await this.replace(req, this.credentials.plan(req.flows, req.credentials), { action: 'deploy' });
      } catch (e) {
        // Another instance deployed first and this one has not applied it yet: a deploy without
        // a rev means "replace whatever is there", so catch up and deploy on top of it.
        if (!(this.storage.shared && req.rev === undefined && (e as RunnelError).code === 'version_mismatch')) throw e;
        await this.followStored();
        return this.replace(req, this.credentials.plan(req.flows, req.credentials), { action: 'deploy' });
      }
    });
  }

  /** Since when (epoch ms) the deploy under way has been running; undefined when none is. */
  get deployingSince(): number | undefined {
    return this.deployStarted;
  }

  /** Called after every deploy, rollback and single-flow edit with its outcome and duration. */
  observeDeploys(observer: DeployObserver): void {
    this.deployObservers.push(observer);
  }

  /** Runs a deploy inside the deploy lock, timing it and reporting its outcome. */
  private exclusive(type: string, run: () => Promise<DeployResult>): Promise<DeployResult> {
    return this.mutex.run(async () => {
      const started = performance.now();
      this.deployStarted = Date.now();
      let outcome: DeployOutcome = 'error';
      try {
        const result = await run();
        outcome = 'success';
        return result;
      } catch (e) {
        if (e instanceof RunnelError) outcome = e.status === 409 ? 'conflict' : e.status < 500 ? 'rejected' : 'error';
        throw e;
      } finally {
        this.deployStarted = undefined;
        const seconds = (performance.now() - started) / 1000;
        for (const observer of this.deployObservers) observer({ type, outcome, seconds, rev: this.active.rev, nodes: this.services.nodes.size });
      }
    });
  }

  /**
   * A deploy computed from the active configuration inside the deploy lock, so a concurrent deploy
   * cannot slip in between reading and writing (the single-flow API edits one tab this way).
   */
  editFlows(change: (flows: FlowNodeConfig[]) => FlowNodeConfig[], req: Omit<DeployRequest, 'flows' | 'rev'>): Promise<DeployResult> {
    return this.exclusive(req.type, async () => {
      const flows = change(structuredClone(this.active.flows));
      return this.replace({ ...req, flows }, this.credentials.plan(flows), { action: 'deploy' });
    });
  }

  /** Deploys a kept revision (flows and its credentials) as a new revision. */
  rollback(req: RollbackRequest): Promise<DeployResult> {
    return this.exclusive(req.type, async () => {
      this.checkRev(req.expectedRev);
      const target = await this.storage.getRevision({ rev: req.rev });
      if (target === undefined) throw new RunnelError('not_found', `No kept revision has rev ${req.rev}`);
      const plan = await this.credentials.planRestore(target.flows, target.credentials);
      return this.replace({ ...req, flows: target.flows }, plan, { action: 'rollback', restoredSeq: target.seq });
    });
  }

  /** What a deploy of `req` would do, computed by the deploy's own planning; changes nothing. */
  async preview(req: DeployRequest): Promise<DeployPreview> {
    this.checkRev(req.rev);
    const old = this.active;
    const type = req.type === 'reload' ? 'full' : req.type;
    const source = req.type === 'reload' ? await this.storage.getFlows() : undefined;
    const plan = source ? await this.credentials.planRestore(source.flows, source.credentials) : this.credentials.plan(req.flows, req.credentials);
    const next = planDeploy(old.parsed, plan.flows, plan.changedNodes, type, this.registry.isKnownType, this.view);
    const sets = this.flowSet.preview(next.parsed, next.stop);
    const stopping = new Set(sets.stop);
    return {
      rev: next.rev,
      type: req.type,
      stop: sets.stop,
      // Stopped flows (POST /flows/state) stay stopped: a deploy starts nothing.
      start: this.started ? sets.start : [],
      rewire: [...next.rewired].filter((id) => !stopping.has(id) && this.services.nodes.has(id)),
      unchanged: sets.running,
      missingTypes: [...next.parsed.missingTypes],
      credentials: this.credentials.compare(plan.credentials),
    };
  }

  private checkRev(rev: string | undefined): void {
    if (rev !== undefined && rev !== this.active.rev) {
      throw new RunnelError('version_mismatch', `The flows have changed: rev ${rev} is not the active rev`);
    }
  }

  private async replace(req: DeployRequest, plan: CredentialPlan, revision: Pick<RevisionMeta, 'action' | 'restoredSeq'>): Promise<DeployResult> {
    const old = this.active;
    const type = req.type === 'reload' ? 'full' : req.type;
    const next = planDeploy(old.parsed, plan.flows, plan.changedNodes, type, this.registry.isKnownType, this.view);
    const doc = plan.changed || this.credentials.needsSave ? await this.credentials.serialise(plan.credentials) : null;
    const texts = old.parsed.text && next.parsed.text ? { before: old.parsed.text, after: next.parsed.text } : undefined;
    const meta: RevisionMeta = { ...revision, ...this.revisionMeta(req, old.flows, plan.flows, texts), type };
    const { rev } = await this.storage.saveFlows({ flows: plan.flows, credentials: doc, expectedRev: old.rev, json: next.json, rev: next.rev, revision: meta, type });
    this.credentials.commit(plan.credentials);
    await this.credentials.saved(doc);
    this.credentialsUnreadable = false;
    this.active = { flows: plan.flows, parsed: next.parsed, rev, json: next.json };
    // Flows stopped through POST /flows/state: the deploy is saved, not started.
    let stopped: string[] = [];
    let restarted: string[] = [];
    if (this.safeMode) {
      // As in Node-RED, a deploy of any type leaves safe mode and starts everything.
      this.safeMode = false;
      ({ started: restarted } = await this.transition.during(async () => {
        await ensureFlowModules(this, next.parsed.all.values());
        this.emitFlows('starting', 'full');
        return this.flowSet.apply(next.parsed, 'all');
      }));
      this.started = true;
    } else if (this.started) {
      ({ stopped, started: restarted } = await this.transition.during(async () => {
        await ensureFlowModules(this, next.parsed.all.values());
        this.emitFlows('stopping', next.type, next.diff);
        return this.flowSet.apply(next.parsed, next.stop, next.rewired, () => {
          this.emitStopped(next.type, next.diff, true);
          this.emitFlows('starting', next.type, next.diff);
        });
      }));
    }
    const event = revision.action === 'rollback' ? 'flows.rollback' : 'flows.set';
    this.log.audit({ event, user: req.user, ip: req.ip, reqId: req.reqId, type: req.type, rev: { old: old.rev, new: rev } }, `flows ${revision.action === 'rollback' ? 'rolled back' : 'deployed'}`);
    this.emitStarted(next.type, next.diff, true);
    this.events.emit('runtime-event', { id: 'runtime-deploy', payload: { revision: rev }, retain: true });
    return { rev, restarted, stopped };
  }

  private revisionMeta(req: DeployRequest, before: FlowNodeConfig[], after: FlowNodeConfig[], texts?: NodeTexts) {
    return {
      time: Date.now(),
      ...(req.user === undefined ? {} : { user: req.user }),
      nodeCount: after.length,
      summary: summarise(before, after, texts),
    };
  }

  /** Re-reads flows and credentials from storage and restarts everything. */
  private reload(req: DeployRequest): Promise<DeployResult> {
    return this.transition.during(() => this.reloadFlows(req));
  }

  private async reloadFlows(req: DeployRequest): Promise<DeployResult> {
    const old = this.active.rev;
    this.emitFlows('stopping', 'full', noDiff);
    await this.flowSet.stopAll();
    this.emitStopped('full', noDiff, true);
    const before = this.active.flows;
    await this.loadFromStorage();
    await this.storage.recordRevision({ action: 'reload', type: 'reload', ...this.revisionMeta(req, before, this.active.flows) });
    let stopped: string[] = [];
    let restarted: string[] = [];
    if (this.safeMode) {
      this.safeMode = false;
      this.started = true;
    }
    if (this.started) {
      await ensureFlowModules(this, this.active.parsed.all.values());
      this.emitFlows('starting', 'full');
      ({ stopped, started: restarted } = await this.flowSet.apply(this.active.parsed, 'all'));
    }
    this.log.audit({ event: 'flows.set', user: req.user, ip: req.ip, reqId: req.reqId, type: 'reload', rev: { old, new: this.active.rev } }, 'flows reloaded');
    this.emitStarted('full', undefined, true);
    this.events.emit('runtime-event', { id: 'runtime-deploy', payload: { revision: this.active.rev }, retain: true });
    return { rev: this.active.rev, restarted, stopped };
  }

  /**
   * Restarts the deployed nodes of the given types (and the subflow instances containing them), so a
   * module upgraded in place runs its new code without a full restart.
   */
  restartNodesOfTypes(types: ReadonlySet<string>): Promise<string[]> {
    return this.mutex.run(async () => {
      if (!this.started) return [];
      const parsed = this.active.parsed;
      const ids = new Set<string>();
      const templates = new Set<string>();
      for (const conf of parsed.all.values()) {
        if (!types.has(conf.type)) continue;
        if (conf.z !== undefined && parsed.subflows.has(conf.z)) templates.add(conf.z);
        else ids.add(conf.id);
      }
      for (const template of templates) for (const instance of parsed.instances.get(template) ?? []) ids.add(instance);
      return (await this.transition.during(() => this.flowSet.apply(parsed, ids))).started;
    });
  }

  /**
   * `flows:<phase>` with Node-RED's payload: `config` is the active configuration (`{flows, rev}`;
   * while stopping for a deploy it is already the new one, as in Node-RED), `diff` its diff with
   * the previous one as arrays (built when a listener first reads it), absent at start-up.
   */
  private emitFlows(phase: 'starting' | 'started' | 'stopping' | 'stopped', type: string, diff?: () => ConfigDiff): void {
    const event = `flows:${phase}`;
    if (this.events.listenerCount(event) === 0) return;
    const payload: Record<string, unknown> = { config: { flows: this.active.flows, rev: this.active.rev }, type };
    if (diff) {
      let arrays: Record<string, unknown> | undefined;
      Object.defineProperty(payload, 'diff', { enumerable: true, configurable: true, get: () => (arrays ??= diffArrays(diff())) });
    } else payload.diff = undefined;
    this.events.emit(event, payload);
  }

  private emitStopped(type: string, diff: () => ConfigDiff, deploy: boolean): void {
    this.emitFlows('stopped', type, diff);
    this.noticeState('stop', deploy);
    this.events.emit('nodes-stopped');
  }

  private emitStarted(type: string, diff: (() => ConfigDiff) | undefined, deploy: boolean): void {
    this.emitFlows('started', type, diff);
    this.events.emit('nodes-started');
    // A deploy while flows are stopped (POST /flows/state) saves them without starting them.
    this.noticeState(this.started ? 'start' : 'stop', deploy);
  }

  /** The current `runtime-state` notification (retained for editors that connect later). */
  get stateNotice(): Record<string, unknown> {
    return this.lastStateNotice;
  }

  /**
   * Tells the editor the flows' state, with Node-RED's warning forms while something is wrong:
   * deployed types missing, or credentials that did not decrypt (and will be replaced by the next
   * deploy). A notification without `text` closes the editor's earlier warning.
   */
  private noticeState(state: 'start' | 'stop', deploy: boolean): void {
    const payload: Record<string, unknown> = { state, deploy };
    const missing = this.flowSet.missingTypes;
    if (missing.length) {
      Object.assign(payload, { type: 'warning', error: 'missing-types', text: 'notification.warnings.missing-types', types: [...missing] });
    } else if (this.credentialsUnreadable) {
      Object.assign(payload, { type: 'warning', error: 'credentials_load_failed', text: 'notification.warnings.credentials_load_failed_reset' });
    }
    this.lastStateNotice = payload;
    this.events.emit('runtime-event', { id: 'runtime-state', payload, retain: true });
  }

  private async loadFromStorage(atStart = false): Promise<void> {
    const snapshot = await this.storage.getFlows();
    if (snapshot.recovered) this.log.warn({ recovered: snapshot.recovered }, 'storage repaired an interrupted save');
    try {
      await this.credentials.load(snapshot.credentials);
      this.credentialsUnreadable = false;
    } catch (err) {
      // Only a key the user chose may replace credentials it cannot read (Node-RED's behaviour):
      // a generated key is never the one they were meant to open with.
      if (atStart && this.credentialKey.type !== 'user') throw new RunnelError('credentials_undecryptable', secretNeeded(this.credentialKey.type, storedCredentialsName(this.settings)));
      if (atStart && this.storage.shared !== undefined) {
        throw new RunnelError('credentials_undecryptable', 'the stored credentials do not decrypt with this instance\'s key: every instance sharing a database needs the same credentialSecret');
      }
      // Node-RED's behaviour: flows still start, without credentials; the stored ones are left as
      // they are until the next deploy replaces them, and the editor says so meanwhile.
      this.log.error({ code: (err as RunnelError).code, err: (err as Error).message }, this.credentialsProblem());
      this.credentialsUnreadable = true;
      this.credentials.replaceOnNextSave();
    }
    this.active = { flows: snapshot.flows, parsed: this.parse(snapshot.flows), rev: snapshot.rev };
  }

  private scheduleStartWaiting(): void {
    if (this.restartScheduled || !this.started) return;
    this.restartScheduled = true;
    setImmediate(() => {
      this.restartScheduled = false;
      void this.mutex.run(async () => {
        if (!this.started) return;
        const parsed = this.parse(this.active.flows);
        this.active.parsed = parsed;
        await this.flowSet.start(parsed);
        // The missing-types warning shrinks, or closes once nothing is missing.
        this.noticeState('start', false);
      });
    });
  }

  private credentialsFor(id: string, type: string, env: (name: string) => unknown): Record<string, unknown> | undefined {
    const stored = this.credentials.get(id);
    if (stored) return substituteEnv(stored as FlowNodeConfig, env) as Record<string, unknown>;
    return this.registry.getCredentialDefinition(type) ? {} : undefined;
  }

  /** RED.nodes.addCredentials / deleteCredentials: change one node's credentials and persist soon. */
  updateNodeCredentials(id: string, value: Record<string, unknown> | undefined): void {
    if (value === undefined) this.credentials.delete(id);
    else this.credentials.add(id, value);
    clearTimeout(this.credentialSave);
    this.credentialSave = setTimeout(() => void this.mutex.run(() => this.flushCredentials()), 100);
    this.credentialSave.unref();
  }

  private async flushCredentials(): Promise<void> {
    if (!this.credentialSave) return;
    clearTimeout(this.credentialSave);
    this.credentialSave = undefined;
    const doc = await this.credentials.serialise();
    await this.storage.saveFlows({ flows: this.active.flows, credentials: doc, expectedRev: this.active.rev });
    await this.credentials.saved(doc);
  }
}
