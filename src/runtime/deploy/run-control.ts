import type { Settings } from '../../settings/settings.js';
import { FlowsPart, type FlowsDeps } from './flows-part.js';
import type { FlowsState } from '../config/deploy-types.js';

/** The retained runtime-state event of safe mode, as Node-RED sends it (the editor shows its warning). */
const SAFE_MODE_STATE = { state: 'safe', error: 'safe-mode', type: 'warning', text: 'notification.warnings.safe-mode' };
/** Runtime-config key of the flows state set through POST /flows/state (Node-RED's name). */
const FLOW_STATE = 'runtimeFlowState';

/**
 * Whether the flows run, apart from deploys: held back at start by safe mode or by a stop kept from
 * POST /flows/state, started or stopped by that route, and reported by GET /flows/state.
 */
export class RunControl extends FlowsPart {
  private stoppedByOperator = false;

  constructor(deps: FlowsDeps, private readonly settings: Settings) {
    super(deps);
  }

  /** Reads whether POST /flows/state stopped the flows before the last shut-down. */
  async loadStoppedState(): Promise<void> {
    this.stoppedByOperator = this.runtimeStateEnabled && (await this.storage.getRuntimeConfig())[FLOW_STATE] === 'stop';
  }

  /** Starts the loaded flows, unless safe mode or a kept stop holds them back. */
  startLoaded(): Promise<void> {
    return this.mutex.run(async () => {
      if (this.state.safeMode) {
        this.log.info('Flows stopped in safe mode. Deploy to start.');
        this.events.emit('runtime-event', { id: 'runtime-state', payload: SAFE_MODE_STATE, retain: true });
        return;
      }
      if (this.stoppedByOperator) {
        this.log.info('Flows stopped through POST /flows/state: loaded, not started');
        this.notices.noticeState('stop', false);
        return;
      }
      // POST /flows/state may have started them since load.
      if (!this.state.started) await this.runFlows();
    });
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
      this.state.safeMode = false;
      if (state === 'start' && !this.state.started) await this.runFlows();
      else if (state === 'stop' && this.state.started) await this.stopFlows();
      await this.storage.updateRuntimeConfig((config) => ({ ...config, [FLOW_STATE]: state }));
      this.log.audit({ event: 'flows.state', state, user: who.user, reqId: who.reqId }, `flows ${state === 'start' ? 'started' : 'stopped'}`);
    });
  }

  /** Stops every flow (POST /flows/state, shut-down); called inside the deploy lock. */
  async stopFlows(): Promise<void> {
    this.state.started = false;
    await this.stopAll(false);
  }

  private runFlows(): Promise<void> {
    return this.transition.during(async () => {
      await this.startAll(this.state.active.parsed);
      this.state.started = true;
      this.notices.emitStarted('full', undefined, false);
    });
  }

  getState(): FlowsState {
    // Node-RED's word while safe mode holds the flows back, until a deploy or POST /flows/state starts them.
    const state: FlowsState = { state: this.state.started ? 'start' : this.state.safeMode ? 'safe' : 'stop' };
    // Instances sharing storage may briefly run different revs: each says which it runs.
    if (this.storage.shared) state.rev = this.state.active.rev;
    if (this.flowSet.missingTypes.length) state.missingTypes = [...this.flowSet.missingTypes];
    if (this.flowSet.errors.size || this.credentials.unreadable) state.errors = [...this.flowSet.errors.values()];
    if (this.credentials.unreadable) state.errors!.push({ id: 'credentials', type: 'credentials', error: this.credentials.problem() });
    return state;
  }
}
