import type { PreparedJSONata, RedUtil } from '../../runtime/red-api/red-api-types.js';

/**
 * `RED.util.evaluateJSONataExpression` as a promise. Core nodes call the callback form, the one
 * the RED API offers contributed modules, rather than the runtime's JSONata code.
 */
export function evaluateJSONata(util: RedUtil, exp: PreparedJSONata, input: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => util.evaluateJSONataExpression(exp, input, (err, value) => (err ? reject(err) : resolve(value))));
}
