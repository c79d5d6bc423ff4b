import type { Settings } from '../settings.js';

/** Settings nodes must never read through RED.settings. */
const HIDDEN = new Set(['adminAuth', 'credentialSecret', 'extra', 'loginThrottle']);

/**
 * RED.settings: a read-only view with Node-RED's property names plus `get(name)`. Contributed
 * modules read `userDir` (absolute), `settingsFile`, `httpNodeRoot`, `uiHost` and their own keys.
 */
export function settingsView(settings: Settings, version: string): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  const values: Record<string, unknown> = { ...settings.extra, version };
  for (const [key, value] of Object.entries(settings)) if (!HIDDEN.has(key)) values[key] = value;
  for (const [key, value] of Object.entries(values)) {
    Object.defineProperty(view, key, { get: () => value, enumerable: true });
  }
  Object.defineProperty(view, 'get', { value: (name: string) => values[name], enumerable: false });
  Object.defineProperty(view, 'available', { value: () => true, enumerable: false });
  Object.defineProperty(view, 'set', {
    value: (name: string) => Promise.reject(new Error(`Cannot set read-only setting ${name}`)),
    enumerable: false,
  });
  return Object.freeze(view);
}
