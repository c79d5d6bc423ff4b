/**
 * Builds the stores `contextStorage` names, with Node-RED's choice of default: the store a string
 * `default` names, else a store called `default`, else the first one listed. Without any
 * configured store there is one memory store called `memory`.
 */
import type { ContextStorageSettings, ContextStoreSettings } from '../../settings/settings.js';
import { FileStore, type FileStoreConfig } from './file-store.js';
import { MemoryStore } from './memory-store.js';
import { PostgresStore, type PostgresStoreSource } from './postgres-store.js';
import { asContextStore, type ContextStore, type StoreLogger } from './store.js';

export interface StoreSet {
  /** Every store by its configured name, in the settings' order. */
  byName: Map<string, ContextStore>;
  defaultName: string;
  defaultStore: ContextStore;
  /** Node-RED keeps a closed node's context only when stores are configured. */
  configured: boolean;
  /** `name [module=…]` of each store, for the start-up log. */
  descriptions: string[];
}

/**
 * `shared`: the cluster's database, when storage is shared; the `postgres` store needs it.
 */
export function createStores(storage: ContextStorageSettings | undefined, userDir: string | undefined, log: StoreLogger, shared?: PostgresStoreSource): StoreSet {
  if (!storage) {
    const memory = new MemoryStore();
    return { byName: new Map([['memory', memory]]), defaultName: 'memory', defaultStore: memory, configured: false, descriptions: ["'default' [module=memory]"] };
  }
  const byName = new Map<string, ContextStore>();
  const descriptions: string[] = [];
  for (const [name, entry] of Object.entries(storage)) {
    if (typeof entry === 'string') continue;
    byName.set(name, createStore(name, entry, userDir, log, shared));
    descriptions.push(`'${name}' [module=${typeof entry.module === 'string' ? entry.module : 'custom'}]`);
  }
  const alias = storage.default;
  const defaultName = typeof alias === 'string' ? alias : byName.has('default') ? 'default' : byName.keys().next().value!;
  return { byName, defaultName, defaultStore: byName.get(defaultName)!, configured: true, descriptions };
}

function createStore(name: string, entry: ContextStoreSettings, userDir: string | undefined, log: StoreLogger, shared: PostgresStoreSource | undefined): ContextStore {
  // Node-RED hands every store its config plus the user dir.
  const config = { ...entry.config, settings: { userDir } };
  try {
    if (entry.module === 'memory') return new MemoryStore();
    if (entry.module === 'localfilesystem') return new FileStore(config as FileStoreConfig, log);
    if (entry.module === 'postgres') {
      if (!shared) throw new Error('the postgres store keeps context in the cluster\'s database: set storage to {type: "postgres", url}');
      return new PostgresStore(shared, log);
    }
    return asContextStore(entry.module(config));
  } catch (err) {
    throw new Error(`Error loading context store '${name}': ${(err as Error).message}`);
  }
}
