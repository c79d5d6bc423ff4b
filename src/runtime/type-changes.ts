import type { Registry } from '../registry/registry.js';
import type { SerialQueue } from '../storage/serial-queue.js';
import type { RuntimeEvents } from './events.js';
import type { FlowSet } from './flow-set.js';
import type { FlowTransition } from './transition.js';
import type { RunState } from './run-state.js';
import type { FlowNotices } from './flow-notices.js';

export interface TypeChangesDeps {
  events: RuntimeEvents;
  /** The deploy lock: restarts never interleave with a deploy. */
  mutex: SerialQueue;
  transition: FlowTransition;
  flowSet: FlowSet;
  state: RunState;
  notices: FlowNotices;
}

/**
 * Node types changing under the running flows: nodes waiting for a type start when it is
 * registered, and nodes of a type whose implementation is replaced restart on the new code.
 */
export class TypeChanges {
  private readonly events: RuntimeEvents;
  private readonly mutex: SerialQueue;
  private readonly transition: FlowTransition;
  private readonly flowSet: FlowSet;
  private readonly state: RunState;
  private readonly notices: FlowNotices;
  private restartScheduled = false;

  constructor(registry: Pick<Registry, 'on'>, deps: TypeChangesDeps) {
    this.events = deps.events;
    this.mutex = deps.mutex;
    this.transition = deps.transition;
    this.flowSet = deps.flowSet;
    this.state = deps.state;
    this.notices = deps.notices;
    // A type arriving (module install, enable) may let waiting flows start.
    // Deployed nodes of a type whose implementation changed restart on the new code.
    registry.on('type-replaced', (type: string) => {
      if (this.state.started) void this.restartNodesOfTypes(new Set([type]));
    });
    registry.on('type-registered', (type: string) => {
      this.events.emit('type-registered', type);
      this.scheduleStartWaiting();
    });
  }

  /**
   * Restarts the deployed nodes of the given types (and the subflow instances containing them), so a
   * module upgraded in place runs its new code without a full restart.
   */
  restartNodesOfTypes(types: ReadonlySet<string>): Promise<string[]> {
    return this.mutex.run(async () => {
      if (!this.state.started) return [];
      const parsed = this.state.active.parsed;
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

  /** Several types may arrive at once (a module's sets): one pass starts what they let start. */
  private scheduleStartWaiting(): void {
    if (this.restartScheduled || !this.state.started) return;
    this.restartScheduled = true;
    setImmediate(() => {
      this.restartScheduled = false;
      void this.mutex.run(async () => {
        if (!this.state.started) return;
        const parsed = this.state.parse(this.state.active.flows);
        this.state.active.parsed = parsed;
        await this.flowSet.start(parsed);
        // The missing-types warning shrinks, or closes once nothing is missing.
        this.notices.noticeState('start', false);
      });
    });
  }
}
