/**
 * Node, flow and global context with Node-RED's semantics (node-api-compat.md note F):
 * one cached object per node, methods that ignore `this`, `cb(err, v1, v2, …)` for key arrays,
 * store names with a single warning for unknown ones, `$parent.` for subflows, and a global
 * scope that falls back to `functionGlobalContext` and survives redeploys.
 */
import { MemoryStore, readKey } from './context/memory-store.js';
import type { ContextCallback, ContextScope, NodeContext } from './util/types.js';

export type { ContextCallback, ContextScope, NodeContext } from './util/types.js';

/** A flow context; inside a subflow `$parent` is the context of the flow around it. */
export interface FlowContext extends ContextScope {
  readonly $parent?: ContextScope;
}

export interface ContextLogger {
  warn(msg: string): void;
}

export interface ContextManagerOptions {
  /** Seeds the global context; read by reference, never copied or modified. */
  functionGlobalContext?: Record<string, unknown>;
  log: ContextLogger;
}

/** The name Node-RED gives the in-memory default store; asking for it by name is not a mistake. */
const DEFAULT_STORE_NAME = 'memory';
const GLOBAL_SCOPE = 'global';
const PARENT = '$parent';
const PARENT_PREFIX = '$parent.';

type ArgStore = string | ContextCallback | undefined;

export class ContextManager {
  private readonly store = new MemoryStore();
  /** Flow and node contexts by scope id (`flowId`, or `nodeId:flowId`). */
  private readonly contexts = new Map<string, ContextScope>();
  private readonly root = createRootContext();
  private readonly global: ContextScope;
  private readonly warnedStores = new Set<string>();
  private readonly log: ContextLogger;

  constructor(options: ContextManagerOptions) {
    this.log = options.log;
    this.global = this.createScope(GLOBAL_SCOPE, undefined, options.functionGlobalContext ?? {});
  }

  getGlobalContext(): ContextScope {
    return this.global;
  }

  getFlowContext(flowId: string, parentFlowId?: string): FlowContext {
    const existing = this.contexts.get(flowId);
    if (existing) return existing;
    const parent = parentFlowId === undefined ? this.root : this.getFlowContext(parentFlowId);
    const ctx = this.createScope(flowId, parent);
    this.contexts.set(flowId, ctx);
    return ctx;
  }

  /** The same object on every call for a node: modules keep their own state on it. */
  getNodeContext(nodeId: string, flowId: string | undefined): NodeContext {
    const id = nodeScopeId(nodeId, flowId);
    const existing = this.contexts.get(id);
    if (existing) return existing as NodeContext;
    const ctx = this.createScope(id, undefined);
    if (flowId !== undefined) Object.defineProperty(ctx, 'flow', { value: this.getFlowContext(flowId) });
    Object.defineProperty(ctx, 'global', { value: this.global });
    this.contexts.set(id, ctx);
    return ctx as NodeContext;
  }

  /** Called when a node closes: its context does not outlive it. */
  deleteNodeContext(nodeId: string, flowId?: string): void {
    const id = nodeScopeId(nodeId, flowId);
    this.contexts.delete(id);
    this.store.delete(id);
  }

  /** Drops the node and flow contexts of ids that are no longer deployed; global survives. */
  clean(activeIds: ReadonlySet<string>): void {
    const keep = (scope: string) => scope === GLOBAL_SCOPE || activeIds.has(scope.split(':')[0]);
    for (const id of this.contexts.keys()) {
      if (!keep(id)) this.contexts.delete(id);
    }
    this.store.retain(keep);
  }

  async close(): Promise<void> {
    this.contexts.clear();
    this.store.clear();
  }

  /** Unnamed and known names use the default store; anything else warns once, then does too. */
  private checkStore(name: string | undefined): void {
    if (!name || name === '_' || name === DEFAULT_STORE_NAME || this.warnedStores.has(name)) return;
    this.warnedStores.add(name);
    this.log.warn(`Unknown context store '${name}' specified. Using default store.`);
  }

  private createScope(scope: string, parent: ContextScope | undefined, seed?: Record<string, unknown>): ContextScope {
    const seedKeys = seed ? Object.keys(seed) : undefined;
    const get = (key: string | string[], store?: ArgStore, cb?: ContextCallback): unknown =>
      this.get(scope, parent, seed, key, store, cb);
    const set = (key: string | string[], value?: unknown, store?: ArgStore, cb?: ContextCallback): void =>
      this.set(scope, parent, key, value, store, cb);
    const keys = (store?: ArgStore, cb?: ContextCallback): string[] | undefined => {
      if (typeof store === 'function') [cb, store] = [store, undefined];
      if (cb !== undefined && typeof cb !== 'function') throw new Error('Callback must be a function');
      this.checkStore(store);
      const stored = this.store.keys(scope);
      const result = seedKeys ? Array.from(new Set(seedKeys.concat(stored))) : stored;
      if (!cb) return result;
      cb(null, result);
      return undefined;
    };
    const ctx = {};
    Object.defineProperties(ctx, { get: { value: get }, set: { value: set }, keys: { value: keys } });
    if (parent) Object.defineProperty(ctx, '$parent', { value: parent });
    return ctx as ContextScope;
  }

  private get(
    scope: string, parent: ContextScope | undefined, seed: Record<string, unknown> | undefined,
    key: string | string[], store: ArgStore, cb: ContextCallback | undefined,
  ): unknown {
    if (cb === undefined && typeof store === 'function') [cb, store] = [store, undefined];
    if (cb !== undefined && typeof cb !== 'function') throw new Error('Callback must be a function');
    const storeName = store as string | undefined;
    if (!isValidKey(key)) return fail(new Error('Invalid context key'), cb);
    if (!Array.isArray(key)) {
      const target = splitStore(key, storeName);
      if (isParentKey(target.key)) {
        const [ctx, rest] = followParent(parent, target.key);
        if (ctx && rest) return ctx.get(rest, target.store, cb);
        if (cb) cb(undefined);
        return undefined;
      }
      this.checkStore(target.store);
      let value: unknown;
      try {
        value = this.store.get(scope, target.key);
        if (value === undefined && seed) value = readKey(seed, target.key);
      } catch (err) {
        return fail(err as Error, cb);
      }
      if (!cb) return value;
      cb(undefined, value);
      return undefined;
    }
    this.checkStore(storeName);
    let values: unknown[];
    try {
      values = this.store.getMany(scope, key);
      if (seed) for (let i = 0; i < values.length; i++) if (values[i] === undefined) values[i] = readKey(seed, key[i]);
    } catch (err) {
      return fail(err as Error, cb);
    }
    if (!cb) return values;
    cb(undefined, ...values);
    return undefined;
  }

  private set(
    scope: string, parent: ContextScope | undefined,
    key: string | string[], value: unknown, store: ArgStore, cb: ContextCallback | undefined,
  ): void {
    if (cb === undefined && typeof store === 'function') [cb, store] = [store, undefined];
    if (cb !== undefined && typeof cb !== 'function') throw new Error('Callback must be a function');
    let storeName = store as string | undefined;
    if (!isValidKey(key)) {
      fail(new Error('Invalid context key'), cb);
      return;
    }
    if (!Array.isArray(key)) {
      const target = splitStore(key, storeName);
      if (isParentKey(target.key)) {
        const [ctx, rest] = followParent(parent, target.key);
        if (ctx && rest) ctx.set(rest, value, target.store, cb);
        else if (cb) cb();
        return;
      }
      key = target.key;
      storeName = target.store;
    }
    this.checkStore(storeName);
    try {
      this.store.set(scope, key, value);
    } catch (err) {
      fail(err as Error, cb);
      return;
    }
    if (cb) cb(undefined);
  }
}

function nodeScopeId(nodeId: string, flowId: string | undefined): string {
  return flowId ? `${nodeId}:${flowId}` : nodeId;
}

function isValidKey(key: unknown): key is string | string[] {
  if (Array.isArray(key)) return key.every((k) => typeof k === 'string' && k.length > 0);
  return typeof key === 'string' && key.length > 0;
}

/** An explicit store argument wins over a `#:(store)::` prefix in the key. */
function splitStore(key: string, store: string | undefined): { key: string; store: string | undefined } {
  if (!key.startsWith('#:(')) return { key, store };
  const m = /^#:\((\S+?)\)::(.*)$/.exec(key);
  if (!m) return { key, store };
  return { key: m[2], store: store || m[1] };
}

function isParentKey(key: string): boolean {
  return key === PARENT || key.startsWith(PARENT_PREFIX);
}

/**
 * `$parent.x` is `x` in the parent context, `$parent.$parent.x` in its parent, and so on.
 * A bare `$parent`, or running out of parents, gives no context: reads are undefined and
 * writes are dropped.
 */
function followParent(parent: ContextScope | undefined, key: string): [ContextScope | undefined, string | undefined] {
  if (key === PARENT) return [parent, undefined];
  let ctx = parent;
  let rest = key.substring(PARENT_PREFIX.length);
  while (ctx && rest.startsWith(PARENT_PREFIX)) {
    ctx = (ctx as FlowContext).$parent;
    rest = rest.substring(PARENT_PREFIX.length);
  }
  return [ctx, rest];
}

function fail(err: Error, cb: ContextCallback | undefined): undefined {
  if (!cb) throw err;
  cb(err);
  return undefined;
}

/** The parent of a top-level flow: it holds nothing and ignores writes. */
function createRootContext(): ContextScope {
  const callbackOf = (store?: ArgStore, cb?: ContextCallback) => (typeof store === 'function' ? store : cb);
  const ctx = {};
  Object.defineProperties(ctx, {
    get: { value: (_key: unknown, store?: ArgStore, cb?: ContextCallback) => void callbackOf(store, cb)?.() },
    set: { value: (_key: unknown, _value: unknown, store?: ArgStore, cb?: ContextCallback) => void callbackOf(store, cb)?.() },
    keys: { value: (store?: ArgStore, cb?: ContextCallback) => void callbackOf(store, cb)?.() },
  });
  return ctx as ContextScope;
}
