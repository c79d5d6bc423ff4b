/**
 * Node-RED's property-expression grammar: `a.b[0]["c d"]['e']`, with `a[msg.x]` cross-references.
 * The accepted language, the numeric/string typing of parts and the error texts follow
 * `normalisePropertyExpression` of @node-red/util exactly, because flows written for Node-RED
 * (and their error handling) depend on them.
 */
import { codedError, type CodedError } from './types.js';

/** A path part; a nested array is an unresolved `[msg…]` reference (only when no msg was given). */
export type PathPart = string | number | PathPart[];

type Indexable = Record<string | number, unknown>;

const IDENTIFIER_START = /[a-z0-9$_]/i;
const DIGITS = /^\d+$/;
const BOX_START = /["'\d]/;

// Expressions come from node configs, so a flow uses a small fixed set of them: parse each once.
const CACHE_LIMIT = 1024;
const cache = new Map<string, readonly PathPart[]>();
const msgCache = new Map<string, readonly PathPart[]>();

const invalid = (message: string): CodedError => codedError('INVALID_EXPR', `Invalid property expression: ${message}`);
const unexpected = (c: string | undefined, i: number) => invalid(`unexpected ${c} at position ${i}`);

/**
 * Parts of `expr`, shared with the cache: callers inside util only read them.
 * Cross-references are resolved against `msg` when it is given, which makes the result
 * message-specific, so those expressions bypass the cache.
 */
export function parsePath(expr: string, msg?: unknown): readonly PathPart[] {
  const cached = cache.get(expr);
  if (cached !== undefined) return cached;
  const parts = parse(expr, msg);
  if (!expr.includes('[msg')) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(expr, parts);
  }
  return parts;
}

/**
 * parsePath for a message expression, where a leading `msg.` is optional. Cached under the
 * expression as written, so the hot path does not slice a new string per message.
 */
export function parseMessagePath(expr: string, msg?: unknown): readonly PathPart[] {
  const cached = msgCache.get(expr);
  if (cached !== undefined) return cached;
  const parts = parsePath(expr.startsWith('msg.') ? expr.substring(4) : expr, msg);
  if (!expr.includes('[msg')) {
    if (msgCache.size >= CACHE_LIMIT) msgCache.clear();
    msgCache.set(expr, parts);
  }
  return parts;
}

export function normalisePropertyExpression(str: string, msg?: unknown, toString?: false): PathPart[];
export function normalisePropertyExpression(str: string, msg: unknown, toString: true): string;
export function normalisePropertyExpression(str: string, msg?: unknown, toString?: boolean): PathPart[] | string;
export function normalisePropertyExpression(str: string, msg?: unknown, toString?: boolean): PathPart[] | string {
  const parts = parsePath(str, msg);
  return toString ? canonical(parts) : parts.slice();
}

/** Walks `parts` from `root`; reading below a missing parent throws a TypeError, as in Node-RED. */
export function readPath(root: unknown, parts: readonly PathPart[]): unknown {
  let value = root;
  for (let i = 0; i < parts.length; i++) {
    value = (value as Indexable)[parts[i] as string];
  }
  return value;
}

function canonical(parts: readonly PathPart[]): string {
  let result = String(parts[0]);
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i];
    const text = typeof p === 'string' ? (p.includes('"') ? `'${p}'` : `"${p}"`) : String(p);
    result += `[${text}]`;
  }
  return result;
}

function parse(str: string, msg: unknown): PathPart[] {
  const length = str.length;
  if (length === 0) throw invalid('zero-length');
  const parts: PathPart[] = [];
  let start = 0;
  let inString = false;
  let inBox = false;
  let quote = '';
  for (let i = 0; i < length; i++) {
    const c = str[i];
    if (inString) {
      if (c !== quote) continue;
      if (i === start) throw invalid(`zero-length string at position ${start}`);
      parts.push(str.substring(start, i));
      const next = str[i + 1];
      if (inBox && next !== ']') throw invalid(`unexpected array expression at position ${start}`);
      if (!inBox && i + 1 !== length && next !== '[' && next !== '.') {
        throw invalid(`unexpected ${next} expression at position ${i + 1}`);
      }
      start = i + 1;
      inString = false;
      continue;
    }
    switch (c) {
      case "'":
      case '"':
        if (i !== start) throw unexpected(c, i);
        inString = true;
        quote = c;
        start = i + 1;
        break;
      case '.':
        if (i === 0) throw unexpected('.', 0);
        if (start !== i) {
          const v = str.substring(start, i);
          parts.push(DIGITS.test(v) ? parseInt(v, 10) : v);
        }
        if (i === length - 1) throw invalid('unterminated expression');
        if (!IDENTIFIER_START.test(str[i + 1])) throw unexpected(str[i + 1], i + 1);
        start = i + 1;
        break;
      case '[': {
        if (i === 0) throw unexpected(c, i);
        // Unlike a dotted segment, the text before a bracket stays a string even when numeric.
        if (start !== i) parts.push(str.substring(start, i));
        if (i === length - 1) throw invalid('unterminated expression');
        if (str.startsWith('msg.', i + 1) || str.startsWith('msg[', i + 1)) {
          const end = closingBracket(str, i);
          if (end < 0) throw invalid(`unmatched '[' at position ${i}`);
          parts.push(crossReference(str.substring(i + 1, end), i + 1, msg));
          i = end;
          start = end + 1;
          inBox = false;
          continue;
        }
        if (!BOX_START.test(str[i + 1])) throw unexpected(str[i + 1], i + 1);
        start = i + 1;
        inBox = true;
        break;
      }
      case ']':
        if (!inBox) throw unexpected(c, i);
        if (start !== i) {
          const v = str.substring(start, i);
          if (!DIGITS.test(v)) throw invalid(`unexpected array expression at position ${start}`);
          parts.push(parseInt(v, 10));
        }
        start = i + 1;
        inBox = false;
        break;
      case ' ':
        throw invalid(`unexpected ' ' at position ${i}`);
    }
  }
  if (inBox || inString) throw invalid('unterminated expression');
  if (start < length) parts.push(str.substring(start));
  return parts;
}

/** Index of the `]` closing the `[` at `open`, counting nested brackets; -1 when unmatched. */
function closingBracket(str: string, open: number): number {
  let depth = 1;
  for (let j = open + 1; j < str.length; j++) {
    const c = str[j];
    if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
  }
  return -1;
}

/** `[msg.x]`: its value as the next key, or the parsed inner path when there is no message. */
function crossReference(inner: string, position: number, msg: unknown): PathPart {
  try {
    if (!msg) return parse(inner, msg);
    const value = readPath(msg, parseMessagePath(inner, msg));
    if (value === undefined) {
      throw codedError('INVALID_EXPR', `Invalid expression: undefined reference at position ${position} : ${inner}`);
    }
    return typeof value === 'number' ? value : String(value);
  } catch {
    throw codedError('INVALID_EXPR', `Invalid expression started at position ${position}`);
  }
}
