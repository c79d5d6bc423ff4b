import type { Registry } from '../../registry/registry.js';
import { FlowsPart, type FlowsDeps } from './flows-part.js';

/**
 * Node types changing under the running flows: nodes waiting for a type start when it is
 * registered, and nodes of a type whose implementation is replaced restart on the new code.
 */
export class TypeChanges extends FlowsPart {
  private restartScheduled = false;

  constructor(deps: FlowsDeps, registry: Pick<Registry, 'on'>) {
    super(deps);
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
