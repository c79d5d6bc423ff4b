/** evaluateNodeProperty: turns a TypedInput (value, type) pair into a value, type by type as Node-RED does. */
import { formatDate } from './moment/date-format.js';
import { evaluateEnvProperty } from './env.js';
import { normalisePropertyExpression } from './expression.js';
import { evaluateJSONataExpression, prepareJSONataExpression } from './jsonata.js';
import { getMessageProperty } from './properties.js';
import { codedError, type ResultCallback, type UtilNode } from './types.js';
import { parseContextStore } from './values.js';

const TRUE = /^true$/i;

export function evaluateNodeProperty(value: unknown, type: string, node: UtilNode | null | undefined, msg: unknown): unknown;
export function evaluateNodeProperty(
  value: unknown, type: string, node: UtilNode | null | undefined, msg: unknown, cb: ResultCallback,
): undefined;
export function evaluateNodeProperty(
  value: unknown, type: string, node: UtilNode | null | undefined, msg: unknown, cb?: ResultCallback,
): unknown;
export function evaluateNodeProperty(
  value: unknown, type: string, node: UtilNode | null | undefined, msg: unknown, cb?: ResultCallback,
): unknown {
  let result: unknown = value;
  switch (type) {
    case 'str':
      result = '' + (value as string);
      break;
    case 'num':
      result = Number(value);
      break;
    case 'json':
      result = JSON.parse(value as string);
      break;
    case 're':
      result = new RegExp(value as string);
      break;
    case 'date':
      result = dateValue(value);
      break;
    case 'bin':
      result = binValue(value as string);
      break;
    case 'bool':
      result = TRUE.test(value as string);
      break;
    case 'env':
      result = evaluateEnvProperty(value as string, node);
      break;
    case 'msg':
      if (!msg) break;
      try {
        result = getMessageProperty(msg, value as string);
      } catch (err) {
        if (!cb) throw err;
        cb(err as Error);
        return undefined;
      }
      break;
    case 'flow':
    case 'global':
      if (!node) break;
      return contextValue(value as string, type, node, msg, cb);
    case 'jsonata': {
      const expr = prepareJSONataExpression(value as string, node);
      evaluateJSONataExpression(expr, msg, cb);
      return undefined;
    }
  }
  if (!cb) return result;
  cb(null, result);
  return undefined;
}

function dateValue(format: unknown): unknown {
  if (format === 'object') return new Date();
  if (format === 'iso') return new Date().toISOString();
  if (typeof format === 'string' && format) return formatDate(new Date(), format);
  return Date.now();
}

function binValue(value: string): Buffer {
  const data: unknown = JSON.parse(value);
  if (Array.isArray(data)) return Buffer.from(data as number[]);
  if (typeof data === 'string') return Buffer.from(data);
  throw codedError('INVALID_BUFFER_DATA', 'Not string or array');
}

/** Context values go through the context API, so a store name and a callback are honoured. */
function contextValue(
  value: string, type: 'flow' | 'global', node: UtilNode, msg: unknown, cb: ResultCallback | undefined,
): unknown {
  const { key, store } = parseContextStore(value);
  let resolved = key;
  if (key.includes('[msg')) resolved = normalisePropertyExpression(key, msg, true);
  const scope = node.context()[type];
  if (!scope) {
    const err = new TypeError(`Node ${node.id} has no ${type} context`);
    if (!cb) throw err;
    cb(err);
    return undefined;
  }
  if (!cb) return scope.get(resolved, store);
  scope.get(resolved, store, cb as (err?: Error | null, ...values: unknown[]) => void);
  return undefined;
}
