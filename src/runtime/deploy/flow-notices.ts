import type { ConfigDiff } from '../config/diff.js';
import type { RuntimeEvents } from '../events.js';
import type { FlowSet } from '../flows/flow-set.js';
import type { RuntimeCredentials } from './credentials.js';
import type { RunState } from './run-state.js';

const EMPTY_DIFF: ConfigDiff = {
  added: new Set(), changed: new Set(), removed: new Set(), rewired: new Set(), linked: new Set(), flowChanged: new Set(), globalConfigChanged: false,
};
/** Node-RED's diff when stopping without a new configuration (shut-down, reload). */
export const noDiff = () => EMPTY_DIFF;

function diffArrays(d: ConfigDiff): Record<string, unknown> {
  return {
    added: [...d.added], changed: [...d.changed], removed: [...d.removed], rewired: [...d.rewired],
    linked: [...d.linked], flowChanged: [...d.flowChanged], globalConfigChanged: d.globalConfigChanged,
  };
}

/**
 * What the runtime tells modules and the editor as flows stop and start: Node-RED's `flows:*`,
 * `nodes-started`/`nodes-stopped` events and the retained `runtime-state` notification.
 */
export class FlowNotices {
  /** The last `runtime-state` notification, for whoever starts listening later (the editor's /comms). */
  private lastStateNotice: Record<string, unknown> = { state: 'stop', deploy: false };

  constructor(
    private readonly events: RuntimeEvents,
    private readonly state: RunState,
    private readonly flowSet: Pick<FlowSet, 'missingTypes'>,
    private readonly credentials: Pick<RuntimeCredentials, 'unreadable'>,
  ) {}

  /**
   * `flows:<phase>` with Node-RED's payload: `config` is the active configuration (`{flows, rev}`;
   * while stopping for a deploy it is already the new one, as in Node-RED), `diff` its diff with
   * the previous one as arrays (built when a listener first reads it), absent at start-up.
   */
  emitFlows(phase: 'starting' | 'started' | 'stopping' | 'stopped', type: string, diff?: () => ConfigDiff): void {
    const event = `flows:${phase}`;
    if (this.events.listenerCount(event) === 0) return;
    const payload: Record<string, unknown> = { config: { flows: this.state.active.flows, rev: this.state.active.rev }, type };
    if (diff) {
      let arrays: Record<string, unknown> | undefined;
      Object.defineProperty(payload, 'diff', { enumerable: true, configurable: true, get: () => (arrays ??= diffArrays(diff())) });
    } else payload.diff = undefined;
    this.events.emit(event, payload);
  }

  emitStopped(type: string, diff: () => ConfigDiff, deploy: boolean): void {
    this.emitFlows('stopped', type, diff);
    this.noticeState('stop', deploy);
    this.events.emit('nodes-stopped');
  }

  emitStarted(type: string, diff: (() => ConfigDiff) | undefined, deploy: boolean): void {
    this.emitFlows('started', type, diff);
    this.events.emit('nodes-started');
    // A deploy while flows are stopped (POST /flows/state) saves them without starting them.
    this.noticeState(this.state.started ? 'start' : 'stop', deploy);
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
  noticeState(state: 'start' | 'stop', deploy: boolean): void {
    const payload: Record<string, unknown> = { state, deploy };
    const missing = this.flowSet.missingTypes;
    if (missing.length) {
      Object.assign(payload, { type: 'warning', error: 'missing-types', text: 'notification.warnings.missing-types', types: [...missing] });
    } else if (this.credentials.unreadable) {
      Object.assign(payload, { type: 'warning', error: 'credentials_load_failed', text: 'notification.warnings.credentials_load_failed_reset' });
    }
    this.lastStateNotice = payload;
    this.events.emit('runtime-event', { id: 'runtime-state', payload, retain: true });
  }
}
