import type { Runtime } from '../runtime.js';
import type { ContextScope } from '../context/context.js';
import { encodeObject } from '../util/encode.js';
import { RunnelError } from '../../base/errors.js';
import type { Caller } from './caller.js';

export type ContextKind = 'global' | 'flow' | 'node';
/** Which context: the global one, a deployed tab's or subflow's (`flow`), or a deployed node's. */
export interface ContextTarget {
  scope: ContextKind;
  /** The flow's or node's id; unused for `global`. */
  id?: string;
  /** A store's name; the default store when absent. */
  store?: string;
}
/** A value encoded as the debug sidebar shows a message (`{msg, format}`). */
export type EncodedValue = unknown;

const call = <T = unknown>(fn: (cb: (err: unknown, value?: unknown) => void) => void) =>
  new Promise<T | undefined>((resolve, reject) => fn((err, value) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(value as T))));

/** The editor's Context sidebar: /context/global, /context/flow/:id, /context/node/:id. */
export interface ContextApi {
  /** One key's value in one store (the default one unless `target.store`), encoded. */
  getValue(target: ContextTarget, key: string): Promise<EncodedValue>;
  /** Every key's value, encoded, by store: every store, or only `target.store`. */
  getValues(target: ContextTarget): Promise<Record<string, Record<string, EncodedValue>>>;
  /** Deletes one key from one store (the default one unless `target.store`); audited. */
  delete(target: ContextTarget, key: string, caller: Caller): Promise<void>;
}

/** Only deployed flows and nodes have a context to show; `not_found` for others and unknown stores. */
export function contextApi(runtime: Runtime): ContextApi {
  const context = runtime.context;
  const stores = () => context.listStores().stores;
  const scopeOf = ({ scope, id }: ContextTarget): ContextScope => {
    if (scope === 'global') return context.getGlobalContext();
    const config = runtime.getFlows().flows.find((n) => n.id === id);
    if (scope === 'flow' && config && (config.type === 'tab' || config.type === 'subflow')) return context.getFlowContext(config.id);
    if (scope === 'node' && config && config.type !== 'tab' && config.type !== 'subflow') return context.getNodeContext(config.id, config.z);
    throw new RunnelError('not_found', `No deployed ${scope} ${id}`);
  };
  const storeOf = (target: ContextTarget) => {
    const store = target.store ?? context.listStores().default;
    if (!stores().includes(store)) throw new RunnelError('not_found', `No context store ${store}`);
    return store;
  };
  const encoded = (value: unknown) => encodeObject({ msg: value });

  return {
    getValue: async (target, key) => {
      const ctx = scopeOf(target);
      const store = storeOf(target);
      return encoded(await call((cb) => ctx.get(key, store, cb as never)));
    },
    getValues: async (target) => {
      const ctx = scopeOf(target);
      const result: Record<string, Record<string, unknown>> = {};
      for (const store of target.store ? [storeOf(target)] : stores()) {
        const values: Record<string, unknown> = {};
        for (const k of (await call<string[]>((cb) => ctx.keys(store, cb as never))) ?? []) values[k] = encoded(await call((cb) => ctx.get(k, store, cb as never)));
        result[store] = values;
      }
      return result;
    },
    delete: async (target, key, caller) => {
      const ctx = scopeOf(target);
      const store = storeOf(target);
      await call((cb) => ctx.set(key, undefined, store, cb as never));
      runtime.log.audit({ event: 'context.delete', user: caller.user, ip: caller.ip, reqId: caller.reqId, scope: target.scope, id: target.id, store, key }, 'context value deleted');
    },
  };
}
