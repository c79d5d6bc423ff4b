import { evaluateEnvList, needsAsyncEnv, type EnvContext } from './env.js';
import { cloneMessage } from './util/clone.js';

/** Returned by `EnvScope.lookup` for a name the scope does not define. */
export const UNSET: unique symbol = Symbol('runnel.env.unset');

/**
 * The evaluated env list of one container (a tab, a group, a subflow instance or the global-config
 * node). Plain lists are evaluated on first use; a list with JSONata entries must be `prepare`d,
 * which the runtime awaits before the container's nodes are constructed (they read env while
 * they are built). Object values are copied on every read, as in Node-RED, so a node changing
 * what it got cannot change what the next node gets.
 */
export class EnvScope {
  private values: Map<string, unknown> | undefined;

  constructor(
    private readonly entries: unknown,
    private readonly context: () => EnvContext,
  ) {}

  /** Whether `prepare` has asynchronous work to do. */
  get needsPreparing(): boolean {
    return !this.values && needsAsyncEnv(this.entries);
  }

  /** A promise only when there is asynchronous work to wait for. */
  prepare(): Promise<void> | undefined {
    if (!this.needsPreparing) return undefined;
    return Promise.resolve(evaluateEnvList(this.entries, this.context())).then((values) => {
      this.values = values;
    });
  }

  lookup(name: string): unknown {
    if (!this.values) {
      const result = evaluateEnvList(this.entries, this.context());
      // Only a lookup before `prepare` finished gets here with a promise: it sees nothing yet.
      if (result instanceof Promise) return UNSET;
      this.values = result;
    }
    if (!this.values.has(name)) return UNSET;
    const value = this.values.get(name);
    return value !== null && typeof value === 'object' ? cloneMessage(value) : value;
  }
}
