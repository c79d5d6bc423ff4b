import path from 'node:path';
import type { Settings } from '../settings.js';
import { normaliseNodeTypeName } from './util/index.js';

/** Settings nodes must never read through RED.settings. */
const HIDDEN = new Set(['adminAuth', 'credentialSecret', 'extra', 'loginThrottle']);

export interface NodeSettingDefinition {
  value?: unknown;
  /** Exported to clients in GET /settings. */
  exportable?: boolean;
}

/**
 * RED.settings: one read-only view per runtime with Node-RED's property names plus `get(name)`.
 * Contributed modules read `userDir` (absolute), `settingsFile`, `httpNodeRoot`, `uiHost`, keys of
 * their own from the settings file, and the node settings types register (`registerType(…,
 * {settings})`), which appear on the view as they are registered.
 */
export class SettingsView {
  readonly view: Record<string, unknown> = {};
  private readonly values: Record<string, unknown>;
  private readonly nodeSettings = new Map<string, Record<string, NodeSettingDefinition>>();

  constructor(private readonly settings: Settings, version: string) {
    this.values = { ...settings.extra, version };
    for (const [key, value] of Object.entries(settings)) if (!HIDDEN.has(key)) this.values[key] = value;
    this.values.userDir = path.resolve(settings.userDir);
    if (settings.settingsFile !== undefined) this.values.settingsFile = path.resolve(settings.settingsFile);
    for (const key of Object.keys(this.values)) this.expose(key);
    const values = this.values;
    Object.defineProperties(this.view, {
      get: { value: (name: string) => values[name] },
      available: { value: () => true },
      set: { value: (name: string) => Promise.reject(new Error(`Cannot set read-only setting ${name}`)) },
      delete: { value: (name: string) => Promise.reject(new Error(`Cannot delete read-only setting ${name}`)) },
    });
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
