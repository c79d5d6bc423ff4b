/**
 * The in-memory context store: one object per scope, values kept by reference. Keys are
 * property expressions (`a.b[0]`); a missing parent reads as undefined here (unlike
 * getMessageProperty), but a malformed key still throws INVALID_EXPR.
 */
import { getObjectProperty, setObjectProperty } from '../util/properties.js';

type ScopeData = Record<string, unknown>;

export class MemoryStore {
  private readonly scopes = new Map<string, ScopeData>();

  get(scope: string, key: string): unknown {
    const data = this.scopes.get(scope);
    return data === undefined ? undefined : readKey(data, key);
  }

  getMany(scope: string, keys: readonly string[]): unknown[] {
    const data = this.scopes.get(scope);
    return keys.map((key) => (data === undefined ? undefined : readKey(data, key)));
  }

  /** With an array of keys, values pair up by index; a missing value is stored as null. */
  set(scope: string, key: string | readonly string[], value: unknown): void {
    let data = this.scopes.get(scope);
    if (data === undefined) {
      data = {};
      this.scopes.set(scope, data);
    }
    if (!Array.isArray(key)) {
      setObjectProperty(data, key as string, value);
      return;
    }
    const values = Array.isArray(value) ? value : [value];
    for (let i = 0; i < key.length; i++) {
      setObjectProperty(data, key[i], i < values.length ? values[i] : null);
    }
  }

  keys(scope: string): string[] {
    const data = this.scopes.get(scope);
    return data === undefined ? [] : Object.keys(data);
  }

  delete(scope: string): void {
    this.scopes.delete(scope);
  }

  /** Drops every scope for which `keep` says false. */
  retain(keep: (scope: string) => boolean): void {
    for (const scope of this.scopes.keys()) {
      if (!keep(scope)) this.scopes.delete(scope);
    }
  }

  clear(): void {
    this.scopes.clear();
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
