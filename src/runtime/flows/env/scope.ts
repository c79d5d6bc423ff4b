import { evaluateEnvList, needsAsyncEnv, type EnvContext } from './env.js';
import { cloneMessage } from '../../util/clone.js';

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
  /** An asynchronous evaluation under way: later calls wait for it rather than start another. */
  private pending: Promise<void> | undefined;

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
    return this.evaluateAsync();
  }

  private evaluateAsync(): Promise<void> {
    this.pending ??= Promise.resolve(evaluateEnvList(this.entries, this.context())).then((values) => {
      this.values = values;
    });
    return this.pending;
  }

  lookup(name: string): unknown {
    if (!this.values) {
      // Only a lookup before `prepare` finished meets JSONata here: it sees nothing yet.
      if (needsAsyncEnv(this.entries)) {
        void this.evaluateAsync();
        return UNSET;
      }
      this.values = evaluateEnvList(this.entries, this.context()) as Map<string, unknown>;
    }
    if (!this.values.has(name)) return UNSET;
    const value = this.values.get(name);
    return value !== null && typeof value === 'object' ? cloneMessage(value) : value;
  }
}
