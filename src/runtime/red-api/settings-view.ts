import path from 'node:path';
import type { Settings } from '../../settings/settings.js';
import { normaliseNodeTypeName } from '../util/index.js';

/** Settings nodes must never read through RED.settings. */
const HIDDEN = new Set(['adminAuth', 'credentialSecret', 'extra', 'loginThrottle', 'https', 'httpNodeAuth', 'httpStaticAuth', 'unsupported']);

/** Persists the values nodes set through RED.settings.set (the runtime config, beside the file's). */
export type SettingsSaver = (values: Record<string, unknown>) => Promise<void>;

export interface NodeSettingDefinition {
  value?: unknown;
  /** Exported to clients in GET /settings. */
  exportable?: boolean;
}

/**
 * RED.settings: one view per runtime with Node-RED's property names plus `get(name)`. Contributed
 * modules read `userDir` (absolute), `settingsFile`, `httpNodeRoot`, `uiHost`, keys of their own
 * from the settings file, and the node settings types register (`registerType(…, {settings})`),
 * which appear on the view as they are registered. As in Node-RED, `set` and `delete` work for
 * names the settings file does not set; those values are kept in the runtime config.
 */
export class SettingsView {
  readonly view: Record<string, unknown> = {};
  private readonly values: Record<string, unknown>;
  private readonly nodeSettings = new Map<string, Record<string, NodeSettingDefinition>>();
  /** Names the settings file (or Runnel) owns: read-only. */
  private readonly fixed: Set<string>;
  private readonly stored: Record<string, unknown> = {};
  private saver: SettingsSaver | undefined;

  constructor(private readonly settings: Settings, version: string) {
    this.values = { ...settings.extra, version };
    for (const [key, value] of Object.entries(settings)) if (!HIDDEN.has(key)) this.values[key] = value;
    this.values.userDir = path.resolve(settings.userDir);
    if (settings.settingsFile !== undefined) this.values.settingsFile = path.resolve(settings.settingsFile);
    for (const key of Object.keys(this.values)) this.expose(key);
    this.fixed = new Set([...Object.keys(this.values), ...HIDDEN]);
    const values = this.values;
    Object.defineProperties(this.view, {
      get: { value: (name: string) => values[name] },
      available: { value: () => this.saver !== undefined },
      set: { value: (name: string, value: unknown) => this.set(name, value) },
      delete: { value: (name: string) => this.set(name, undefined) },
    });
  }

  /** Values stored by an earlier run, and where to store new ones; called once at start. */
  attachStore(stored: Record<string, unknown>, saver: SettingsSaver): void {
    for (const [name, value] of Object.entries(stored)) {
      if (this.fixed.has(name)) continue;
      this.stored[name] = value;
      this.values[name] = value;
      this.expose(name);
    }
    this.saver = saver;
  }

  /** Node-RED throws at once for a name the settings file sets, and resolves once the value is saved. */
  private set(name: string, value: unknown): Promise<void> {
    if (typeof name !== 'string' || this.fixed.has(name)) throw new Error(`Property '${String(name)}' is read-only`);
    if (!this.saver) return Promise.reject(new Error('Runtime settings are not available yet'));
    if (value === undefined) {
      delete this.stored[name];
      delete this.values[name];
    } else {
      const copy = structuredClone(value);
      this.stored[name] = copy;
      this.values[name] = copy;
      this.expose(name);
    }
    return this.saver({ ...this.stored });
  }

  /**
   * Node-RED's registerNodeSettings: each name must start with the camel-cased type
   * (`my-node` → `myNodeColour`). A value from the settings file wins over the default.
   */
  registerNodeSettings(type: string, defs: Record<string, NodeSettingDefinition>): void {
    const prefix = normaliseNodeTypeName(type);
    for (const name of Object.keys(defs)) {
      if (!name.startsWith(prefix)) throw new Error(`Registered invalid property name '${name}'. Properties for this node must start with '${prefix}'`);
    }
    this.nodeSettings.set(type, defs);
    for (const [name, def] of Object.entries(defs)) {
      if (name in this.values || def === null || typeof def !== 'object' || !('value' in def)) continue;
      this.values[name] = def.value;
      this.expose(name);
    }
  }

  /** The exportable node settings for GET /settings; keys `safe` already has are not overwritten. */
  exportNodeSettings(safe: Record<string, unknown>): Record<string, unknown> {
    for (const defs of this.nodeSettings.values()) {
      for (const [name, def] of Object.entries(defs)) {
        if (!def?.exportable || name in safe) continue;
        if (name in this.settings.extra) safe[name] = this.settings.extra[name];
        else if ('value' in def) safe[name] = def.value;
      }
    }
    return safe;
  }

  private expose(key: string): void {
    if (Object.prototype.hasOwnProperty.call(this.view, key)) return;
    const values = this.values;
    Object.defineProperty(this.view, key, { get: () => values[key], enumerable: true });
  }
}

const views = new WeakMap<Settings, SettingsView>();

/** The RED.settings view of one runtime (keyed by its settings object). */
export function settingsViewFor(settings: Settings, version: string): SettingsView {
  let view = views.get(settings);
  if (!view) {
    view = new SettingsView(settings, version);
    views.set(settings, view);
  }
  return view;
}
