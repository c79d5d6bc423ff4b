import type { FlowNodeConfig } from '../../storage/contract.js';
import type { SerialQueue } from '../../base/serial-queue.js';
import { ensureFlowModules, type ExternalModulesHost } from '../../registry/external-modules.js';
import type { RuntimeEvents } from '../events.js';
import type { FlowSet } from '../flows/flow-set.js';
import type { ParsedConfig } from '../config/config.js';
import type { ConfigDiff } from '../config/diff.js';
import type { DeployPlan } from '../config/plan.js';
import type { FlowTransition } from './transition.js';
import type { RunState } from './run-state.js';
import { noDiff, type FlowNotices } from './flow-notices.js';

export interface ActiveFlowsDeps {
  events: RuntimeEvents;
  /** What installs the npm modules function nodes list, before their flows start. */
  moduleHost: ExternalModulesHost;
  /** The deploy lock. */
  mutex: SerialQueue;
  transition: FlowTransition;
  flowSet: FlowSet;
  state: RunState;
  notices: FlowNotices;
}

/** What a change of the running flows stopped and (re)started. */
export interface FlowChanges {
  stopped: string[];
  started: string[];
}

/** The stored configuration as a reload reads it. */
export interface StoredConfig {
  flows: FlowNodeConfig[];
  rev: string;
}

/**
 * The one owner of the running configuration, as Node-RED's setFlows is: the only writer of the
 * active configuration (RunState.active) and the only one announcing a deploy (its flows:started
 * and the retained runtime-deploy notification, once per deploy). Deploys, the cluster follower,
 * run control and type changes change the running flows through it, one change at a time in its
 * lock.
 */
export class ActiveFlows {
  constructor(private readonly deps: ActiveFlowsDeps) {}

  /** Runs `work` in the deploy lock: whatever changes the running flows runs there, one change at a time. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.deps.mutex.run(work);
  }

  /**
   * Makes the stored configuration active at start, not started yet; announced as Node-RED's load
   * announces it, so an editor learns the rev whether or not the flows start.
   */
  load(stored: StoredConfig): void {
    const { state } = this.deps;
    state.active = { flows: stored.flows, parsed: state.parse(stored.flows), rev: stored.rev };
    this.announce(stored.rev);
  }

  /**
   * Makes a planned configuration (deployed here, or by another instance) the active one and moves
   * the running flows to it as its deployment type says: a deploy in safe mode starts everything,
   * flows stopped through POST /flows/state stay stopped.
   */
  async activate(plan: DeployPlan, rev: string): Promise<FlowChanges> {
    const { state, transition } = this.deps;
    state.active = { flows: plan.flows, parsed: plan.parsed, rev, json: plan.json };
    let changes: FlowChanges = { stopped: [], started: [] };
    if (state.safeMode) {
      // As in Node-RED, a deploy of any type leaves safe mode and starts everything.
      state.safeMode = false;
      changes = await transition.during(() => this.startNodes());
      state.started = true;
    } else if (state.started) {
      changes = await this.applyPlan(plan);
    }
    this.deployed(plan.type, plan.diff, rev);
    return changes;
  }

  /** A reload: stops every node, makes what `read` loads active and starts it (and leaves safe mode). */
  reload(read: () => Promise<StoredConfig>): Promise<FlowChanges> {
    const { state, transition } = this.deps;
    return transition.during(async () => {
      await this.stopAll(true);
      const stored = await read();
      state.active = { flows: stored.flows, parsed: state.parse(stored.flows), rev: stored.rev };
      if (state.safeMode) {
        state.safeMode = false;
        state.started = true;
      }
      const changes = state.started ? await this.startNodes() : { stopped: [], started: [] };
      this.deployed('full', undefined, stored.rev);
      return changes;
    });
  }

  /** Starts the active configuration apart from a deploy (at start, POST /flows/state). */
  startAll(): Promise<void> {
    const { state, transition, notices } = this.deps;
    return transition.during(async () => {
      await this.startNodes();
      state.started = true;
      notices.emitStarted('full', undefined, false);
    });
  }

  /** Stops every running node, with Node-RED's events; `deploy` when a deploy (a reload) stops them. */
  async stopAll(deploy: boolean): Promise<void> {
    const { flowSet, notices } = this.deps;
    notices.emitFlows('stopping', 'full', noDiff);
    await flowSet.stopAll();
    notices.emitStopped('full', noDiff, deploy);
  }

  /** Stops `ids` and starts what of the active configuration is not running, as one transition. */
  restart(ids: Set<string>): Promise<FlowChanges> {
    const { flowSet, state, transition } = this.deps;
    return transition.during(() => flowSet.apply(state.active.parsed, ids));
  }

  /** Parses the active flows again, for what changed under them: this instance's primary role, or known types. */
  reparse(): ParsedConfig {
    const { state } = this.deps;
    return (state.active.parsed = state.parse(state.active.flows));
  }

  /** Starts the nodes that waited for types now known. */
  async startWaiting(): Promise<void> {
    await this.deps.flowSet.start(this.reparse());
  }

  /** Starts every active node once the npm modules its function nodes list are installed. */
  private async startNodes(): Promise<FlowChanges> {
    const { moduleHost, notices, flowSet, state } = this.deps;
    const parsed = state.active.parsed;
    await ensureFlowModules(moduleHost, parsed.all.values());
    notices.emitFlows('starting', 'full');
    return flowSet.apply(parsed, 'all');
  }

  /** Moves the running flows to the plan: stops, rewires and starts what it says. */
  private applyPlan(plan: DeployPlan): Promise<FlowChanges> {
    const { moduleHost, notices, flowSet, transition } = this.deps;
    return transition.during(async () => {
      await ensureFlowModules(moduleHost, plan.parsed.all.values());
      notices.emitFlows('stopping', plan.type, plan.diff);
      return flowSet.apply(plan.parsed, plan.stop, plan.rewired, () => {
        notices.emitStopped(plan.type, plan.diff, true);
        notices.emitFlows('starting', plan.type, plan.diff);
      });
    });
  }

  /** The flows a deploy made active have started (or stay stopped): modules and editors hear it once. */
  private deployed(type: string, diff: (() => ConfigDiff) | undefined, rev: string): void {
    this.deps.notices.emitStarted(type, diff, true);
    this.announce(rev);
  }

  /** The retained runtime-deploy notification: editors compare its rev with the one they hold. */
  private announce(rev: string): void {
    this.deps.events.emit('runtime-event', { id: 'runtime-deploy', payload: { revision: rev }, retain: true });
  }
}
