import type { FlowNodeConfig } from '../storage/types.js';

export interface EnvEntry {
  name: string;
  value?: unknown;
  type?: string;
}

type Lookup = (name: string) => unknown;

const WHOLE = /^\$\{(\S+?)\}$/;
const PIECE = /\$\{(\S+?)\}/g;
const SKIP = new Set(['id', 'type', 'z', 'wires', 'x', 'y', 'g']);

/**
 * Node-RED's `${ENV}` substitution in node properties: a property that is exactly `${X}` takes the
 * variable's value (whatever its type); `${X}` inside a longer string is replaced by its text.
 * Returns a shallow copy; nested objects are copied only where something was substituted.
 */
export function substituteEnv(config: FlowNodeConfig, lookup: Lookup): FlowNodeConfig {
  const copy: FlowNodeConfig = { ...config };
  for (const key of Object.keys(copy)) {
    if (SKIP.has(key)) continue;
    const value = copy[key];
    if (typeof value === 'string') {
      if (value.includes('${')) copy[key] = substitute(value, lookup);
    } else if (value !== null && typeof value === 'object') {
      const next = substituteDeep(value, lookup, 0);
      if (next !== value) copy[key] = next;
    }
  }
  return copy;
}

function substitute(value: string, lookup: Lookup): unknown {
  const whole = WHOLE.exec(value);
  if (whole) {
    const v = lookup(whole[1]);
    return v === undefined ? '' : v;
  }
  return value.replace(PIECE, (_m, name: string) => {
    const v = lookup(name);
    return v === undefined || v === null ? '' : String(v);
  });
}

function substituteDeep(value: unknown, lookup: Lookup, depth: number): unknown {
  if (depth > 32) return value;
  if (typeof value === 'string') return value.includes('${') ? substitute(value, lookup) : value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = substituteDeep(item, lookup, depth + 1);
      if (next !== item) (out ??= value.slice())[i] = next;
    });
    return out ?? value;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let out: Record<string, unknown> | undefined;
    for (const [k, item] of Object.entries(value)) {
      const next = substituteDeep(item, lookup, depth + 1);
      if (next !== item) (out ??= { ...(value as Record<string, unknown>) })[k] = next;
    }
    return out ?? value;
  }
  return value;
}

/**
 * Evaluates a tab's or subflow's `env` list (Node-RED's typed env entries). Entries may refer to
 * the outer environment (type `env`) and to earlier entries.
 */
export function evaluateEnvList(entries: EnvEntry[] | undefined, outside: Lookup): Map<string, unknown> {
  const env = new Map<string, unknown>();
  if (!Array.isArray(entries)) return env;
  const lookup = (name: string) => (env.has(name) ? env.get(name) : outside(name));
  for (const entry of entries) {
    if (!entry || typeof entry.name !== 'string') continue;
    env.set(entry.name, evaluateEnvValue(entry.value, entry.type, lookup));
  }
  return env;
}

export function evaluateEnvValue(value: unknown, type: string | undefined, lookup: Lookup): unknown {
  const text = value === undefined || value === null ? '' : String(value);
  switch (type) {
    case 'num':
      return Number(text);
    case 'bool':
      return /^true$/i.test(text);
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    case 'env':
      return text.includes('${') ? substitute(text, lookup) : lookup(text);
    case 'bin':
      try {
        return Buffer.from(JSON.parse(text));
      } catch {
        return Buffer.from(text);
      }
    case 'date':
      return Date.now();
    default:
      return value;
  }
}
