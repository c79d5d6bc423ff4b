import type { Logger } from '../../base/log.js';
import type { Storage } from '../../storage/contract.js';
import type { SerialQueue } from '../../base/serial-queue.js';
import type { Registry } from '../../registry/registry.js';
import type { ExternalModulesHost } from '../../registry/external-modules.js';
import type { RuntimeEvents } from '../events.js';
import type { FlowSet } from '../flows/flow-set.js';
import type { FlowTransition } from './transition.js';
import type { RunState } from './run-state.js';
import type { RuntimeCredentials } from './credentials.js';
import { noDiff, type FlowNotices } from './flow-notices.js';
import type { ParsedConfig } from '../config/config.js';
import type { DeployPlan } from '../config/plan.js';
import { ensureFlowModules } from '../../registry/external-modules.js';

/** What every part that starts, stops or replaces the running flows works with; the Runtime builds it once. */
export interface FlowsDeps {
  storage: Storage;
  log: Logger;
  events: RuntimeEvents;
  registry: Pick<Registry, 'isKnownType'>;
  /** What installs the npm modules function nodes list, before their flows start. */
  moduleHost: ExternalModulesHost;
  /** The deploy lock: whatever changes the running flows runs in it, one change at a time. */
  mutex: SerialQueue;
  transition: FlowTransition;
  flowSet: FlowSet;
  state: RunState;
  credentials: RuntimeCredentials;
  notices: FlowNotices;
}

/** A part of the runtime that changes the running flows (deployer, follower, run control, type changes). */
export abstract class FlowsPart {
  protected readonly storage: Storage;
  protected readonly log: Logger;
  protected readonly events: RuntimeEvents;
  protected readonly registry: Pick<Registry, 'isKnownType'>;
  protected readonly moduleHost: ExternalModulesHost;
  protected readonly mutex: SerialQueue;
  protected readonly transition: FlowTransition;
  protected readonly flowSet: FlowSet;
  protected readonly state: RunState;
  protected readonly credentials: RuntimeCredentials;
  protected readonly notices: FlowNotices;

  constructor(deps: FlowsDeps) {
    this.storage = deps.storage;
    this.log = deps.log;
    this.events = deps.events;
    this.registry = deps.registry;
    this.moduleHost = deps.moduleHost;
    this.mutex = deps.mutex;
    this.transition = deps.transition;
    this.flowSet = deps.flowSet;
    this.state = deps.state;
    this.credentials = deps.credentials;
    this.notices = deps.notices;
  }

  /** Starts every active node of `parsed`, once the npm modules its function nodes list are installed. */
  protected async startAll(parsed: ParsedConfig): Promise<{ stopped: string[]; started: string[] }> {
    await ensureFlowModules(this.moduleHost, parsed.all.values());
    this.notices.emitFlows('starting', 'full');
    return this.flowSet.apply(parsed, 'all');
  }

  /** Stops every running node, with Node-RED's events; `deploy` when a deploy (a reload) stops them. */
  protected async stopAll(deploy: boolean): Promise<void> {
    this.notices.emitFlows('stopping', 'full', noDiff);
    await this.flowSet.stopAll();
    this.notices.emitStopped('full', noDiff, deploy);
  }

  /** Moves the running flows to a planned configuration as a deploy does: stops, rewires and starts what the plan says. */
  protected applyPlan(next: DeployPlan): Promise<{ stopped: string[]; started: string[] }> {
    return this.transition.during(async () => {
      await ensureFlowModules(this.moduleHost, next.parsed.all.values());
      this.notices.emitFlows('stopping', next.type, next.diff);
      return this.flowSet.apply(next.parsed, next.stop, next.rewired, () => {
        this.notices.emitStopped(next.type, next.diff, true);
        this.notices.emitFlows('starting', next.type, next.diff);
      });
    });
  }
}
