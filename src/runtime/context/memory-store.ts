/**
 * The in-memory context store: one object per scope, values kept by reference. Keys are
 * property expressions (`a.b[0]`); a missing parent reads as undefined here (unlike
 * getMessageProperty), but a malformed key still throws INVALID_EXPR. Callbacks run
 * synchronously, as in Node-RED.
 */
import { getObjectProperty, setObjectProperty } from '../util/properties.js';
import type { ContextCallback } from '../util/types.js';
import { isActiveScope, type ContextStore } from './store.js';

type ScopeData = Record<string, unknown>;

export class MemoryStore implements ContextStore {
  private readonly scopes = new Map<string, ScopeData>();

  open(): Promise<void> {
    return Promise.resolve();
  }

  /** A memory store's values end with it. */
  close(): Promise<void> {
    this.scopes.clear();
    return Promise.resolve();
  }

  get(scope: string, key: string | string[], cb?: ContextCallback): unknown {
    const data = this.scopes.get(scope);
    let value: unknown;
    try {
      if (!Array.isArray(key)) value = data === undefined ? undefined : readKey(data, key);
      else value = key.map((k) => (data === undefined ? undefined : readKey(data, k)));
    } catch (err) {
      if (!cb) throw err;
      cb(err as Error);
      return undefined;
    }
    if (!cb) return value;
    if (Array.isArray(key)) cb(undefined, ...(value as unknown[]));
    else cb(undefined, value);
    return undefined;
  }

  /** With an array of keys, values pair up by index; a missing value is stored as null. */
  set(scope: string, key: string | string[], value: unknown, cb?: ContextCallback): void {
    let data = this.scopes.get(scope);
    if (data === undefined) {
      data = {};
      this.scopes.set(scope, data);
    }
    try {
      if (!Array.isArray(key)) {
        setObjectProperty(data, key, value);
      } else {
        const values = Array.isArray(value) ? value : [value];
        for (let i = 0; i < key.length; i++) setObjectProperty(data, key[i], i < values.length ? values[i] : null);
      }
    } catch (err) {
      if (!cb) throw err;
      cb(err as Error);
      return;
    }
    if (cb) cb(undefined);
  }

  keys(scope: string, cb?: ContextCallback): string[] | undefined {
    const data = this.scopes.get(scope);
    const keys = data === undefined ? [] : Object.keys(data);
    if (!cb) return keys;
    cb(null, keys);
    return undefined;
  }

  delete(scope: string): Promise<void> {
    this.scopes.delete(scope);
    return Promise.resolve();
  }

  /** Takes effect before it returns: callers may read right after a redeploy. */
  clean(activeNodes: string[]): Promise<void> {
    const active = new Set(activeNodes);
    for (const scope of this.scopes.keys()) {
      if (!isActiveScope(scope, active)) this.scopes.delete(scope);
    }
    return Promise.resolve();
  }

  /** The scope's values, for a store that persists them. */
  data(scope: string): ScopeData | undefined {
    return this.scopes.get(scope);
  }

  /** Adds stored values to a scope (several files may feed the global scope). */
  load(scope: string, values: ScopeData): void {
    const data = this.scopes.get(scope);
    if (data === undefined) this.scopes.set(scope, { ...values });
    else Object.assign(data, values);
  }
}

/** Reads `key` below `data`; only a malformed key is an error. */
export function readKey(data: unknown, key: string): unknown {
  try {
    return getObjectProperty(data, key);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'INVALID_EXPR') throw err;
    return undefined;
  }
}
