import type { Settings } from '../../settings/settings.js';
import type { Storage } from '../../storage/contract.js';
import type { Logger } from '../../base/log.js';
import type { RuntimeEvents } from '../events.js';
import type { FlowSet } from '../flows/flow-set.js';
import type { FlowsState } from '../config/deploy-types.js';
import type { ActiveFlows } from './active-flows.js';
import type { RunState } from './run-state.js';
import type { RuntimeCredentials } from './credentials.js';
import type { FlowNotices } from './flow-notices.js';

/** The retained runtime-state event of safe mode, as Node-RED sends it (the editor shows its warning). */
const SAFE_MODE_STATE = { state: 'safe', error: 'safe-mode', type: 'warning', text: 'notification.warnings.safe-mode' };
/** Runtime-config key of the flows state set through POST /flows/state (Node-RED's name). */
const FLOW_STATE = 'runtimeFlowState';

export interface RunControlDeps {
  active: ActiveFlows;
  state: RunState;
  settings: Settings;
  storage: Storage;
  log: Logger;
  events: RuntimeEvents;
  notices: FlowNotices;
  /** What GET /flows/state reports of the running nodes. */
  flowSet: Pick<FlowSet, 'missingTypes' | 'errors'>;
  credentials: Pick<RuntimeCredentials, 'unreadable' | 'problem'>;
}

/**
 * Whether the flows run, apart from deploys: held back at start by safe mode or by a stop kept from
 * POST /flows/state, started or stopped by that route, and reported by GET /flows/state.
 */
export class RunControl {
  private stoppedByOperator = false;
  private readonly active: ActiveFlows;
  private readonly state: RunState;
  private readonly storage: Storage;
  private readonly log: Logger;

  constructor(private readonly deps: RunControlDeps) {
    ({ active: this.active, state: this.state, storage: this.storage, log: this.log } = deps);
  }

  /** Reads whether POST /flows/state stopped the flows before the last shut-down. */
  async loadStoppedState(): Promise<void> {
    this.stoppedByOperator = this.runtimeStateEnabled && (await this.storage.getRuntimeConfig())[FLOW_STATE] === 'stop';
  }

  /** Starts the loaded flows, unless safe mode or a kept stop holds them back. */
  startLoaded(): Promise<void> {
    return this.active.exclusive(async () => {
      if (this.state.safeMode) {
        this.log.info('Flows stopped in safe mode. Deploy to start.');
        this.deps.events.emit('runtime-event', { id: 'runtime-state', payload: SAFE_MODE_STATE, retain: true });
        return;
      }
      if (this.stoppedByOperator) {
        this.log.info('Flows stopped through POST /flows/state: loaded, not started');
        this.deps.notices.noticeState('stop', false);
        return;
      }
      // POST /flows/state may have started them since load.
      if (!this.state.started) await this.active.startAll();
    });
  }

  /**
   * Node-RED's `runtimeState.enabled`: POST /flows/state exists, and a stop survives restarts. In
   * safe mode the route exists too, so the flows can be started without a deploy.
   */
  get runtimeStateEnabled(): boolean {
    const { settings } = this.deps;
    const runtimeState = settings.extra.runtimeState as { enabled?: unknown } | undefined;
    return runtimeState?.enabled === true || settings.safeMode;
  }

  /**
   * POST /flows/state: stops every flow (deploys then save without starting) or starts them again.
   * The state is kept in the runtime config, so a stop survives a restart.
   */
  setFlowsState(state: 'start' | 'stop', who: { user?: string; reqId?: string }): Promise<void> {
    return this.active.exclusive(async () => {
      this.state.safeMode = false;
      if (state === 'start' && !this.state.started) await this.active.startAll();
      else if (state === 'stop' && this.state.started) await this.stopFlows();
      await this.storage.updateRuntimeConfig((config) => ({ ...config, [FLOW_STATE]: state }));
      this.log.audit({ event: 'flows.state', state, user: who.user, reqId: who.reqId }, `flows ${state === 'start' ? 'started' : 'stopped'}`);
    });
  }

  /** Stops every flow (POST /flows/state, shut-down); called inside the deploy lock. */
  async stopFlows(): Promise<void> {
    this.state.started = false;
    await this.active.stopAll(false);
  }

  getState(): FlowsState {
    // Node-RED's word while safe mode holds the flows back, until a deploy or POST /flows/state starts them.
    const state: FlowsState = { state: this.state.started ? 'start' : this.state.safeMode ? 'safe' : 'stop' };
    // Instances sharing storage may briefly run different revs: each says which it runs.
    if (this.storage.shared) state.rev = this.state.active.rev;
    const { flowSet, credentials } = this.deps;
    if (flowSet.missingTypes.length) state.missingTypes = [...flowSet.missingTypes];
    if (flowSet.errors.size || credentials.unreadable) state.errors = [...flowSet.errors.values()];
    if (credentials.unreadable) state.errors!.push({ id: 'credentials', type: 'credentials', error: credentials.problem() });
    return state;
  }
}
