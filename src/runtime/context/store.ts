/**
 * Node-RED's context store plugin interface (context/index.js), so a custom store written for
 * Node-RED plugs in unchanged. `scope` is `global`, a flow id, or `nodeId:flowId`. Without a
 * callback get/set/keys are synchronous, which a store may refuse by throwing; with one, the
 * callback gets `(err, value…)` (one value per key for an array of keys), `(err)` or `(err, keys)`.
 */
import type { ContextCallback } from '../util/types.js';

export interface ContextStore {
  open(): Promise<void>;
  /** Persists whatever is pending; the store is not used afterwards. */
  close(): Promise<void>;
  get(scope: string, key: string | string[], cb?: ContextCallback): unknown;
  /**
   * `writer`, Runnel's own (Node-RED's stores never look at it): for a write to `global` by a node,
   * that node's scope, so a shared store can tell a primary-only tab's global writes and fence them.
   */
  set(scope: string, key: string | string[], value: unknown, cb?: ContextCallback, writer?: string): void;
  keys(scope: string, cb?: ContextCallback): string[] | undefined;
  delete(scope: string): Promise<void>;
  /** Drops every node and flow scope whose id (before the `:`) is not in `activeNodes`; global stays. */
  clean(activeNodes: string[]): Promise<void>;
}

export interface StoreLogger {
  warn(msg: string): void;
  error(msg: string): void;
}

const METHODS = ['open', 'close', 'get', 'set', 'keys', 'delete', 'clean'] as const;

/** A custom module's store, checked once so a broken one fails at start rather than on first use. */
export function asContextStore(value: unknown): ContextStore {
  const missing = METHODS.filter((m) => typeof (value as Record<string, unknown> | null)?.[m] !== 'function');
  if (missing.length) throw new Error(`the store has no ${missing.join(', ')} method${missing.length > 1 ? 's' : ''}`);
  return value as ContextStore;
}

/** Whether a scope id belongs to a deployed node or flow: global always does. */
export function isActiveScope(scope: string, active: ReadonlySet<string>): boolean {
  return scope === 'global' || active.has(scope.split(':')[0]);
}
