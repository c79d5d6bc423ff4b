/**
 * Node, flow and global context with Node-RED's semantics (node-api-compat.md note F):
 * one cached object per node, methods that ignore `this`, `cb(err, v1, v2, …)` for key arrays,
 * store names with a single warning for unknown ones, `$parent.` for subflows, and a global
 * scope that falls back to `functionGlobalContext` and survives redeploys. Values live in the
 * stores `contextStorage` configures (context/stores.ts); each call goes to the store it names.
 */
import type { ContextStorageSettings } from '../../settings/settings.js';
import { readKey } from './memory-store.js';
import type { ContextStore } from './store.js';
import { createStores, type StoreSet } from './stores.js';
import type { PostgresStoreSource } from './postgres-store.js';
import type { ContextCallback, ContextScope, NodeContext } from '../util/types.js';

export type { ContextCallback, ContextScope, NodeContext } from '../util/types.js';

/** A flow context; inside a subflow `$parent` is the context of the flow around it. */
export interface FlowContext extends ContextScope {
  readonly $parent?: ContextScope;
}

export interface ContextLogger {
  warn(msg: string): void;
  /** Failed writes of persistent stores; they go to `warn` without it. */
  error?(msg: string): void;
  info?(msg: string): void;
}

export interface ContextManagerOptions {
  /** Seeds the global context; read by reference, never copied or modified. */
  functionGlobalContext?: Record<string, unknown>;
  /** Node-RED's `exportGlobalContextKeys`: false keeps the seed's keys out of `global.keys()` (they still read). */
  exportGlobalContextKeys?: boolean;
  /** Node-RED's `contextStorage`; one memory store when absent. */
  contextStorage?: ContextStorageSettings;
  /** Where a localfilesystem store keeps its files unless its config names a `dir`. */
  userDir?: string;
  /** The cluster's shared storage, for the `postgres` store. */
  shared?: PostgresStoreSource;
  log: ContextLogger;
}

const GLOBAL_SCOPE = 'global';
const PARENT = '$parent';
const PARENT_PREFIX = '$parent.';

type ArgStore = string | ContextCallback | undefined;

export class ContextManager {
  private readonly stores: StoreSet;
  /** Flow and node contexts by scope id (`flowId`, or `nodeId:flowId`). */
  private readonly contexts = new Map<string, ContextScope>();
  private readonly root = createRootContext();
  private readonly global: ContextScope;
  private readonly globalSeed: { values: Record<string, unknown>; listed: boolean };
  private readonly warnedStores = new Set<string>();
  private readonly log: ContextLogger;

  constructor(options: ContextManagerOptions) {
    this.log = options.log;
    const log = options.log;
    this.stores = createStores(options.contextStorage, options.userDir, { warn: (m) => log.warn(m), error: (m) => (log.error ?? log.warn).call(log, m) }, options.shared);
    this.globalSeed = { values: options.functionGlobalContext ?? {}, listed: options.exportGlobalContextKeys !== false };
    this.global = this.createScope(GLOBAL_SCOPE, undefined, this.globalSeed.values, this.globalSeed.listed);
  }

  /** Opens every store (a file store loads its files): before any flow starts. */
  async open(): Promise<void> {
    try {
      await Promise.all([...this.uniqueStores()].map((store) => store.open()));
    } catch (err) {
      throw new Error(`Error loading context store: ${(err as Error).message}`);
    }
    for (const description of this.stores.descriptions) this.log.info?.(`Context store  : ${description}`);
  }

  /** What GET /settings reports, as Node-RED's `context` (the editor offers these stores). */
  listStores(): { default: string; stores: string[] } {
    return { default: this.stores.defaultName, stores: [...this.stores.byName.keys()] };
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

  /**
   * The same object on every call for a node: modules keep their own state on it. Its `global`
   * names the node as the writer of what it sets there (a primary-only tab's writes are fenced).
   */
  getNodeContext(nodeId: string, flowId: string | undefined): NodeContext {
    const id = nodeScopeId(nodeId, flowId);
    const existing = this.contexts.get(id);
    if (existing) return existing as NodeContext;
    const ctx = this.createScope(id, undefined);
    if (flowId !== undefined) Object.defineProperty(ctx, 'flow', { value: this.getFlowContext(flowId) });
    Object.defineProperty(ctx, 'global', { value: this.createScope(GLOBAL_SCOPE, undefined, this.globalSeed.values, this.globalSeed.listed, id) });
    this.contexts.set(id, ctx);
    return ctx as NodeContext;
  }

  /**
   * Called when a node closes. As in Node-RED its context ends with it only when no store is
   * configured; configured stores keep it through restarts, and `clean` drops it once the node
   * is no longer deployed.
   */
  deleteNodeContext(nodeId: string, flowId?: string): void {
    if (this.stores.configured) return;
    const id = nodeScopeId(nodeId, flowId);
    this.contexts.delete(id);
    void this.stores.defaultStore.delete(id);
  }

  /**
   * Drops the node and flow contexts of ids that are no longer deployed; global survives. The
   * in-memory part is done on return; files are removed in the background (close waits for them).
   */
  clean(activeIds: ReadonlySet<string>): Promise<void> {
    const keep = (scope: string) => scope === GLOBAL_SCOPE || activeIds.has(scope.split(':')[0]);
    for (const id of this.contexts.keys()) {
      if (!keep(id)) this.contexts.delete(id);
    }
    const active = [...activeIds];
    return Promise.all([...this.uniqueStores()].map((store) => store.clean(active))).then(
      () => undefined,
      (err: Error) => (this.log.error ?? this.log.warn).call(this.log, `Error cleaning context: ${err.message}`),
    );
  }

  /** Drops every value of every store, global ones included (a project switch with clearContext). */
  async clearAll(): Promise<void> {
    await Promise.all([...this.uniqueStores()].map(async (store) => {
      await store.clean([]);
      await store.delete(GLOBAL_SCOPE);
    }));
  }

  /** Persists and closes every store: the last values written before a stop survive it. */
  async close(): Promise<void> {
    this.contexts.clear();
    await Promise.all([...this.uniqueStores()].map((store) => store.close()));
  }

  private uniqueStores(): Set<ContextStore> {
    return new Set(this.stores.byName.values());
  }

  /**
   * The store a call names. Unnamed, `_` and the default's own name are the default store; an
   * unknown name warns once, then uses the default too.
   */
  private storeFor(name: string | undefined): ContextStore {
    if (!name || name === '_') return this.stores.defaultStore;
    const store = this.stores.byName.get(name);
    if (store) return store;
    if (name !== this.stores.defaultName && !this.warnedStores.has(name)) {
      this.warnedStores.add(name);
      this.log.warn(`Unknown context store '${name}' specified. Using default store.`);
    }
    return this.stores.defaultStore;
  }

  private createScope(scope: string, parent: ContextScope | undefined, seed?: Record<string, unknown>, listSeed = true, writer?: string): ContextScope {
    const seedKeys = seed && listSeed ? Object.keys(seed) : undefined;
    const get = (key: string | string[], store?: ArgStore, cb?: ContextCallback): unknown =>
      this.get(scope, parent, seed, key, store, cb);
    const set = (key: string | string[], value?: unknown, store?: ArgStore, cb?: ContextCallback): void =>
      this.set(scope, parent, key, value, store, cb, writer);
    const keys = (store?: ArgStore, cb?: ContextCallback): string[] | undefined => {
      if (typeof store === 'function') [cb, store] = [store, undefined];
      if (cb !== undefined && typeof cb !== 'function') throw new Error('Callback must be a function');
      const target = this.storeFor(store);
      if (!seedKeys) return target.keys(scope, cb);
      if (!cb) return mergeKeys(seedKeys, target.keys(scope));
      const done = cb;
      target.keys(scope, (err, stored) => (err ? done(err) : done(null, mergeKeys(seedKeys, stored as string[]))));
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
    let storeName = store as string | undefined;
    if (!isValidKey(key)) return fail(new Error('Invalid context key'), cb);
    if (!Array.isArray(key)) {
      const target = splitStore(key, storeName);
      if (isParentKey(target.key)) {
        const [ctx, rest] = followParent(parent, target.key);
        if (ctx && rest) return ctx.get(rest, target.store, cb);
        if (cb) cb(undefined);
        return undefined;
      }
      key = target.key;
      storeName = target.store;
    }
    const target = this.storeFor(storeName);
    if (!seed) return target.get(scope, key, cb);
    if (!cb) return withSeed(seed, key, target.get(scope, key));
    const done = cb;
    const keys = key;
    target.get(scope, keys, (err, ...values) => {
      if (err) return done(err);
      let filled: unknown;
      try {
        filled = withSeed(seed, keys, Array.isArray(keys) ? values : values[0]);
      } catch (e) {
        return done(e as Error);
      }
      if (Array.isArray(keys)) done(undefined, ...(filled as unknown[]));
      else done(undefined, filled);
    });
    return undefined;
  }

  private set(
    scope: string, parent: ContextScope | undefined,
    key: string | string[], value: unknown, store: ArgStore, cb: ContextCallback | undefined, writer?: string,
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
    this.storeFor(storeName).set(scope, key, value, cb, writer);
  }
}

/** Global reads fall back to functionGlobalContext for every key the store does not have. */
function withSeed(seed: Record<string, unknown>, key: string | string[], value: unknown): unknown {
  if (!Array.isArray(key)) return value === undefined ? readKey(seed, key) : value;
  const values = value as unknown[];
  for (let i = 0; i < values.length; i++) if (values[i] === undefined) values[i] = readKey(seed, key[i]);
  return values;
}

function mergeKeys(seedKeys: string[], stored: string[] | undefined): string[] {
  return Array.from(new Set(seedKeys.concat(stored ?? [])));
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
