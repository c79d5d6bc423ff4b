/**
 * encodeObject: the debug-sidebar encoding. The editor decodes `format` and the `__enc__`
 * markers, so both follow Node-RED's encoding exactly (including json-stringify-safe's
 * `[Circular ~.path]` markers).
 */
import { inspect } from 'node:util';

export interface EncodeOptions {
  /** Longest string, array or buffer shown before truncation; 1000 by default. */
  maxLength?: number;
}

/** The debug message being encoded: `msg` is the value to show; `format` is added. */
export interface Encodable {
  msg?: unknown;
  format?: string;
  [key: string]: unknown;
}

type Replacer = (this: unknown, key: string, value: unknown) => unknown;

const DEFAULT_MAX_LENGTH = 1000;

function constructorName(value: object): string | undefined {
  return (value as { constructor?: { name?: string } }).constructor?.name;
}

const enc = (type: string, extra?: Record<string, unknown>) => ({ __enc__: true, type, ...extra });

/** Rewrites `wrapper.msg` into its encoded form and sets `wrapper.format`; returns `wrapper`. */
export function encodeObject<T extends Encodable>(wrapper: T, opts?: EncodeOptions): T & { format: string } {
  const out = wrapper as Encodable;
  const max = opts && Object.prototype.hasOwnProperty.call(opts, 'maxLength') ? (opts.maxLength as number) : DEFAULT_MAX_LENGTH;
  try {
    encodeTop(out, max);
  } catch (e) {
    out.format = 'error';
    const err = e as Error;
    const detail = Object.prototype.hasOwnProperty.call(err, 'message') ? err.message : String(err);
    const errorMsg: Record<string, unknown> = {};
    if (err.name) errorMsg.name = err.name;
    errorMsg.message = `encodeObject Error: [${detail}] Value: ${inspect(out.msg)}`.substring(0, max);
    out.msg = JSON.stringify(errorMsg);
  }
  return out as T & { format: string };
}

function encodeTop(out: Encodable, max: number): void {
  const value = out.msg;
  if (value instanceof Error) {
    out.format = 'error';
    const errorMsg: Record<string, unknown> = {};
    if (value.name) errorMsg.name = value.name;
    errorMsg.message = Object.prototype.hasOwnProperty.call(value, 'message') ? value.message : value.toString();
    out.msg = JSON.stringify(errorMsg);
  } else if (Buffer.isBuffer(value)) {
    out.format = `buffer[${value.length}]`;
    const hex = value.toString('hex');
    out.msg = hex.length > max ? hex.substring(0, max) : hex;
  } else if (value !== null && typeof value === 'object') {
    encodeTopObject(out, value, max);
  } else if (typeof value === 'function') {
    out.format = 'function';
    out.msg = '[function]';
  } else if (typeof value === 'boolean' || typeof value === 'number') {
    out.format = typeof value;
    out.msg = value.toString();
  } else if (typeof value === 'bigint') {
    out.format = 'bigint';
    out.msg = enc('bigint', { data: value.toString() });
  } else if (value === null || value === undefined) {
    out.format = value === null ? 'null' : 'undefined';
    out.msg = '(undefined)';
  } else {
    const text = value as string;
    out.format = `string[${text.length}]`;
    if (text.length > max) out.msg = text.substring(0, max) + '...';
  }
}

function encodeTopObject(out: Encodable, value: object, max: number): void {
  let format = constructorName(value) || 'Object';
  // msg.req / msg.res of an HTTP In node show as plain objects.
  if (format === 'IncomingMessage' || format === 'ServerResponse') format = 'Object';
  out.format = format;
  if (/error/i.test(format)) {
    const err = value as { name?: unknown; message?: unknown };
    out.msg = JSON.stringify({ name: err.name, message: err.message });
    return;
  }
  let toEncode: unknown = value;
  let stringify = format === 'Object';
  if (Array.isArray(value)) {
    out.format = `array[${value.length}]`;
    stringify = true;
    if (value.length > max) toEncode = enc('array', { data: value.slice(0, max), length: value.length });
  } else if (format === 'Set') {
    const set = value as Set<unknown>;
    out.format = `set[${set.size}]`;
    toEncode = enc('set', { data: Array.from(set).slice(0, max), length: set.size });
    stringify = true;
  } else if (format === 'Map') {
    const map = value as Map<unknown, unknown>;
    out.format = 'map';
    toEncode = enc('map', { data: Object.fromEntries(Array.from(map.entries()).slice(0, max)), length: map.size });
    stringify = true;
  } else if (format === 'RegExp') {
    out.format = 'regexp';
    out.msg = value.toString();
    return;
  }
  if (stringify) {
    out.msg = safeStringify(toEncode, nestedEncoder(max));
    return;
  }
  try {
    out.msg = value.toString();
  } catch {
    out.msg = '[Type not printable]' + inspect(value);
  }
}

function nestedEncoder(max: number): Replacer {
  return function (key, value) {
    if (key === '_req' || key === '_res') return enc('internal');
    if (value instanceof Error) return value.toString();
    if (Array.isArray(value)) {
      return value.length > max ? enc('array', { data: value.slice(0, max), length: value.length }) : value;
    }
    switch (typeof value) {
      case 'string':
        return value.length > max ? value.substring(0, max) + '...' : value;
      case 'function':
        return enc('function');
      case 'number':
        return Number.isFinite(value) ? value : enc('number', { data: value.toString() });
      case 'bigint':
        return enc('bigint', { data: value.toString() });
      case 'undefined':
        return enc('undefined');
    }
    if (value === null || typeof value !== 'object') return value;
    return encodeNestedObject(value as Record<string, unknown>, max);
  };
}

function encodeNestedObject(value: Record<string, unknown>, max: number): unknown {
  // A Buffer has already been through its toJSON: {type: "Buffer", data: [...]}.
  if (value.type === 'Buffer' && Array.isArray(value.data)) {
    value.__enc__ = true;
    value.length = value.data.length;
    if (value.data.length > max) value.data = value.data.slice(0, max);
    return value;
  }
  switch (constructorName(value)) {
    case 'ServerResponse':
    case 'Socket':
      return '[internal]';
    case 'Set': {
      const set = value as unknown as Set<unknown>;
      return enc('set', { data: Array.from(set).slice(0, max), length: set.size });
    }
    case 'Map': {
      const map = value as unknown as Map<unknown, unknown>;
      return enc('map', { data: Object.fromEntries(Array.from(map.entries()).slice(0, max)), length: map.size });
    }
    case 'RegExp':
      return enc('regexp', { data: value.toString() });
  }
  return value;
}

/**
 * JSON.stringify that replaces a reference to an ancestor with json-stringify-safe's marker.
 * `onCycle` is told when that happened (the context file store warns about it).
 */
export function safeStringify(value: unknown, replacer?: Replacer, space?: number, onCycle?: () => void): string {
  const stack: unknown[] = [];
  const keys: string[] = [];
  return JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    if (stack.length > 0) {
      const pos = stack.indexOf(this);
      if (pos >= 0) {
        stack.splice(pos + 1);
        keys.splice(pos, Infinity, key);
      } else {
        stack.push(this);
        keys.push(key);
      }
      const cycleAt = stack.indexOf(v);
      if (cycleAt >= 0) {
        onCycle?.();
        v = cycleAt === 0 ? '[Circular ~]' : `[Circular ~.${keys.slice(0, cycleAt).join('.')}]`;
      }
    } else {
      stack.push(v);
    }
    return replacer ? replacer.call(this, key, v) : v;
  }, space);
}
