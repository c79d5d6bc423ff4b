/**
 * JSONata expressions as Node-RED prepares them: `$flowContext`, `$globalContext`, `$env`, `$moment` and
 * `$clone` bound to the evaluating node. Evaluation is callback-only, as in Node-RED 4.
 */
import type Jsonata from 'jsonata';
import { lazy } from '../../base/lazy.js';

const jsonata = lazy<typeof Jsonata>('jsonata');
import { cloneMessage } from './clone.js';
import { getSetting } from './env.js';
import { moment } from './moment/jsonata-moment.js';
import type { ContextScope, ResultCallback, UtilNode } from './types.js';

/** The jsonata expression itself (modules may `assign` on it), plus what evaluation needs. */
export type PreparedJSONata = Jsonata.Expression & {
  /** The expression refers to `msg`, so it is evaluated against `{msg}` rather than the message. */
  _legacyMode: boolean;
  _node: UtilNode | null | undefined;
};

const LEGACY_MSG_REFERENCE = /(^|[^a-zA-Z0-9_'".])msg([^a-zA-Z0-9_'"]|$)/;

export function prepareJSONataExpression(value: string, node: UtilNode | null | undefined): PreparedJSONata {
  const expr = jsonata()(value) as PreparedJSONata;
  // Promise-returning so that an asynchronous context store works the same as the memory store.
  expr.assign('flowContext', (key: string, store?: string) => contextGet(node?.context().flow, key, store));
  expr.assign('globalContext', (key: string, store?: string) => contextGet(node?.context().global, key, store));
  expr.assign('env', (name: string) => {
    const v = getSetting(node, name, node?._flow);
    return v === undefined ? '' : v;
  });
  expr.assign('moment', moment);
  expr.registerFunction('clone', (v: unknown) => cloneMessage(v), '<(oa)-:o>');
  expr._legacyMode = LEGACY_MSG_REFERENCE.test(value);
  expr._node = node;
  return expr;
}

export function evaluateJSONataExpression(expr: PreparedJSONata, msg: unknown, cb?: ResultCallback): void {
  if (typeof cb !== 'function') {
    throw new Error('Calls to RED.util.evaluateJSONataExpression must include a callback.');
  }
  const input = expr._legacyMode ? { msg } : msg;
  // The callback runs outside the promise chain so that a throwing callback is not swallowed.
  expr.evaluate(input).then(
    (result: unknown) => process.nextTick(cb, null, result),
    (err: Error) => process.nextTick(cb, err),
  );
}

function contextGet(scope: ContextScope | undefined, key: string, store: string | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (!scope) {
      resolve(undefined);
      return;
    }
    scope.get(key, store, (err, value) => (err ? reject(err) : resolve(value)));
  });
}
