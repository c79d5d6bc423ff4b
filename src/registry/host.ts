import type { Clock } from '../base/clock.js';
import type { Logger } from '../base/log.js';
import type { Settings } from '../settings/settings.js';
import type { RuntimeConfig, Storage } from '../storage/contract.js';
import type { NodeSetInfo, Registry } from './registry.js';

/** i18n message catalogs by language, as a set's `locales/` folder holds them. */
export type Catalogs = Record<string, Record<string, unknown>>;

/** What running a module's code needs: the registry it fills, a log, and the RED object to call it with. */
export interface LoaderHost {
  log: Logger;
  registry: Registry;
  /** The RED object one set's `module.exports = function (RED) {…}` receives. */
  redApiFor(set: NodeSetInfo, options: { moduleDir: string; catalogs: Catalogs }): unknown;
}

/** What the module manager needs of the runtime whose nodes the modules provide. */
export interface ModuleHost extends LoaderHost {
  settings: Settings;
  storage: Storage;
  /** The deployed configuration: a module whose types it uses cannot be removed or disabled. */
  getFlows(): { flows: { type: string }[] };
  /** Restarts deployed nodes of these types on their new code (after an upgrade in place). */
  restartNodesOfTypes(types: ReadonlySet<string>): Promise<unknown>;
  /** Where palette changes are announced as Node-RED's runtime events (`node/added`, ...). */
  events: { emit(event: string, payload: unknown): unknown };
  /** Waits between automatic install attempts; a test's own clock, else the system's. */
  clock?: Pick<Clock, 'sleep'>;
  /** Read-modify-write of the runtime config, where installed modules are recorded. */
  updateRuntimeConfig(change: (config: RuntimeConfig) => RuntimeConfig): Promise<void>;
}
