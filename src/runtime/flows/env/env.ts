import type { FlowNodeConfig } from '../../../storage/contract.js';
import { evaluateJSONataExpression, prepareJSONataExpression } from '../../util/jsonata.js';
import type { UtilNode } from '../../util/types.js';

export interface EnvEntry {
  name: string;
  value?: unknown;
  type?: string;
}

type Lookup = (name: string) => unknown;

const WHOLE = /^\$\{(\S+)\}$/;
const OLD_WHOLE = /^\$\((\S+)\)$/;
const PIECE = /\$\{(\S+?)\}/g;
const DOLLAR = 0x24;
/** The deploy validation's nesting limit. */
const MAX_DEPTH = 512;
const SKIP = new Set(['id', 'type', 'z', 'wires', 'x', 'y', 'g']);

/**
 * The configuration a node is constructed from: a deep copy, as Node-RED makes one, so a
 * constructor changing nested values cannot change the deployed configuration or another subflow
 * instance's. On the way it applies Node-RED's env substitution (flows/util `mapEnvVarProperties`):
 * a string that is exactly `${X}` (or the older `$(X)`) takes the variable's value, whatever its
 * type; a variable that is not set leaves the text as written. Text around a `${X}` is never
 * touched: a function node's JavaScript template literals must reach it unchanged.
 */
export function substituteEnv(config: FlowNodeConfig, lookup: Lookup): FlowNodeConfig {
  const copy: FlowNodeConfig = { ...config };
  for (const key of Object.keys(copy)) {
    if (SKIP.has(key)) continue;
    const value = copy[key];
    if (typeof value === 'string') {
      if (value.charCodeAt(0) === DOLLAR) copy[key] = substitute(value, lookup);
    } else if (value !== null && typeof value === 'object') {
      copy[key] = substituteDeep(value, lookup, 0);
    }
  }
  return copy;
}

function substitute(value: string, lookup: Lookup): unknown {
  const match = WHOLE.exec(value) ?? OLD_WHOLE.exec(value);
  if (!match) return value;
  const v = lookup(match[1]);
  return v === undefined ? value : v;
}

/** `${X}` inside a longer text, as an `env` typed value allows it (evaluateEnvProperty). */
function substitutePieces(value: string, lookup: Lookup): unknown {
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

/** Configurations are JSON, so plain objects and arrays are all there is to copy. */
function substituteDeep(value: unknown, lookup: Lookup, depth: number): unknown {
  if (typeof value === 'string') return value.charCodeAt(0) === DOLLAR ? substitute(value, lookup) : value;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = substituteDeep(value[i], lookup, depth + 1);
    return out;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = substituteDeep((value as Record<string, unknown>)[key], lookup, depth + 1);
  return out;
}

/** What evaluating an env list needs besides the entries. */
export interface EnvContext {
  /** The environment around the list: entries may refer to it (type `env`, JSONata `$env`). */
  outside: Lookup;
  /** Values of `cred` entries (a tab's stored credentials); without it an entry's own value is used. */
  credentials?: Record<string, unknown>;
  /** The node a JSONata value is evaluated for: its context gives `$flowContext` / `$globalContext`. */
  jsonataNode?: Omit<UtilNode, '_flow'>;
  /** Where a failing JSONata value is reported; the variable is then undefined, as in Node-RED. */
  warn: (text: string) => void;
}

/** Whether a list has entries only an asynchronous evaluation can give (JSONata). */
export function needsAsyncEnv(entries: unknown): boolean {
  return Array.isArray(entries) && entries.some((e) => (e as EnvEntry | null)?.type === 'jsonata');
}

/**
 * Evaluates a tab's, group's, subflow instance's or the global-config node's `env` list (Node-RED's
 * typed env entries), in order: an entry may refer to earlier ones and to the environment around
 * it. Synchronous unless the list has a JSONata entry, which JSONata evaluates asynchronously; the
 * runtime awaits those before any node of the container is constructed.
 */
export function evaluateEnvList(entries: unknown, ctx: EnvContext): Map<string, unknown> | Promise<Map<string, unknown>> {
  const env = new Map<string, unknown>();
  if (!Array.isArray(entries)) return env;
  const lookup = (name: string) => (env.has(name) ? env.get(name) : ctx.outside(name));
  const list = entries.filter((e): e is EnvEntry => e !== null && typeof e === 'object' && typeof (e as EnvEntry).name === 'string');
  const evaluateFrom = (start: number): Map<string, unknown> | Promise<Map<string, unknown>> => {
    for (let i = start; i < list.length; i++) {
      const entry = list[i];
      if (entry.type === 'jsonata') {
        return evaluateJSONataEnv(entry, lookup, ctx).then((value) => {
          env.set(entry.name, value);
          return evaluateFrom(i + 1);
        });
      }
      const value = entry.type === 'cred' && ctx.credentials ? ctx.credentials[entry.name] : evaluateEnvValue(entry.value, entry.type, lookup);
      env.set(entry.name, value);
    }
    return env;
  };
  return evaluateFrom(0);
}

function evaluateJSONataEnv(entry: EnvEntry, lookup: Lookup, ctx: EnvContext): Promise<unknown> {
  return new Promise((resolve) => {
    const fail = (err: unknown) => {
      ctx.warn(`env ${entry.name}: JSONata error: ${err instanceof Error ? err.message : String(err)}`);
      resolve(undefined);
    };
    try {
      const node = { id: '', ...ctx.jsonataNode, context: ctx.jsonataNode?.context ?? noContext, _flow: { getSetting: lookup } } as UtilNode;
      const expr = prepareJSONataExpression(String(entry.value ?? ''), node);
      evaluateJSONataExpression(expr, {}, (err, value) => (err ? fail(err) : resolve(value)));
    } catch (err) {
      fail(err);
    }
  });
}

function noContext(): never {
  throw new Error('no context is available here');
}

function evaluateEnvValue(value: unknown, type: string | undefined, lookup: Lookup): unknown {
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
      return text.includes('${') ? substitutePieces(text, lookup) : lookup(text);
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
