import type { Registry } from '../../registry/registry.js';
import type { RuntimeEvents } from '../events.js';
import type { ActiveFlows } from './active-flows.js';
import type { RunState } from './run-state.js';
import type { FlowNotices } from './flow-notices.js';

export interface TypeChangesDeps {
  active: ActiveFlows;
  state: RunState;
  events: RuntimeEvents;
  notices: FlowNotices;
  registry: Pick<Registry, 'on'>;
}

/**
 * Node types changing under the running flows: nodes waiting for a type start when it is
 * registered, and nodes of a type whose implementation is replaced restart on the new code.
 */
export class TypeChanges {
  private restartScheduled = false;
  private readonly active: ActiveFlows;
  private readonly state: RunState;

  constructor(private readonly deps: TypeChangesDeps) {
    ({ active: this.active, state: this.state } = deps);
    // A type arriving (module install, enable) may let waiting flows start.
    // Deployed nodes of a type whose implementation changed restart on the new code.
    deps.registry.on('type-replaced', (type: string) => {
      if (this.state.started) void this.restartNodesOfTypes(new Set([type]));
    });
    deps.registry.on('type-registered', (type: string) => {
      deps.events.emit('type-registered', type);
      this.scheduleStartWaiting();
    });
  }

  /**
   * Restarts the deployed nodes of the given types (and the subflow instances containing them), so a
   * module upgraded in place runs its new code without a full restart.
   */
  restartNodesOfTypes(types: ReadonlySet<string>): Promise<string[]> {
    return this.active.exclusive(async () => {
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
      return (await this.active.restart(ids)).started;
    });
  }

  /** Several types may arrive at once (a module's sets): one pass starts what they let start. */
  private scheduleStartWaiting(): void {
    if (this.restartScheduled || !this.state.started) return;
    this.restartScheduled = true;
    setImmediate(() => {
      this.restartScheduled = false;
      void this.active.exclusive(async () => {
        if (!this.state.started) return;
        await this.active.startWaiting();
        // The missing-types warning shrinks, or closes once nothing is missing.
        this.deps.notices.noticeState('start', false);
      });
    });
  }
}
