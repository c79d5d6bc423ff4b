import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ContextManager } from '../../../src/runtime/context/context.js';
import {
  evaluateEnvProperty, evaluateJSONataExpression, evaluateNodeProperty, formatDate, getSetting,
  prepareJSONataExpression, type UtilNode,
} from '../../../src/runtime/util/index.js';

const quietLog = { warn: () => undefined };

function makeNode(flowEnv: Record<string, unknown> = {}, contexts = new ContextManager({ log: quietLog })): UtilNode {
  return {
    id: 'n1',
    name: 'my node',
    z: 'f1',
    _path: 'f1/n1',
    _flow: { getSetting: (name: string) => flowEnv[name] },
    context: () => contexts.getNodeContext('n1', 'f1'),
  };
}

function evaluateAsync(value: unknown, type: string, node: UtilNode | null, msg: unknown) {
  return new Promise<{ err: Error | null; result: unknown; returned: unknown }>((resolve) => {
    // The callback may run synchronously: read the return value only once the call has returned.
    const returned = evaluateNodeProperty(value, type, node, msg, (err, result) =>
      setImmediate(() => resolve({ err, result, returned })));
  });
}

describe('evaluateNodeProperty', () => {
  it('converts str, num, json, re and bool', () => {
    assert.equal(evaluateNodeProperty(12, 'str', null, null), '12');
    assert.equal(evaluateNodeProperty('3.5', 'num', null, null), 3.5);
    assert.ok(Number.isNaN(evaluateNodeProperty('x', 'num', null, null)));
    assert.deepEqual(evaluateNodeProperty('{"a":[1]}', 'json', null, null), { a: [1] });
    assert.throws(() => evaluateNodeProperty('{bad', 'json', null, null), SyntaxError);
    const re = evaluateNodeProperty('^a+$', 're', null, null) as RegExp;
    assert.ok(re instanceof RegExp);
    assert.equal(re.source, '^a+$');
  });

  it('bool is /^true$/i, not truthiness', () => {
    assert.equal(evaluateNodeProperty('true', 'bool', null, null), true);
    assert.equal(evaluateNodeProperty('TRUE', 'bool', null, null), true);
    assert.equal(evaluateNodeProperty('TRUE ', 'bool', null, null), false);
    assert.equal(evaluateNodeProperty('false', 'bool', null, null), false);
    assert.equal(evaluateNodeProperty('yes', 'bool', null, null), false);
  });

  it('bin makes a Buffer from a JSON array or string, else throws INVALID_BUFFER_DATA', () => {
    assert.deepEqual(evaluateNodeProperty('[1,2,255]', 'bin', null, null), Buffer.from([1, 2, 255]));
    assert.deepEqual(evaluateNodeProperty('"hi"', 'bin', null, null), Buffer.from('hi'));
    assert.throws(() => evaluateNodeProperty('{"a":1}', 'bin', null, null), { code: 'INVALID_BUFFER_DATA', message: 'Not string or array' });
    assert.throws(() => evaluateNodeProperty('5', 'bin', null, null), { code: 'INVALID_BUFFER_DATA' });
  });

  it('date gives a timestamp, a Date, an ISO string or a formatted string', () => {
    const before = Date.now();
    const ts = evaluateNodeProperty('', 'date', null, null) as number;
    assert.equal(typeof ts, 'number');
    assert.ok(ts >= before && ts <= Date.now());
    assert.ok(evaluateNodeProperty('object', 'date', null, null) instanceof Date);
    assert.match(evaluateNodeProperty('iso', 'date', null, null) as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(evaluateNodeProperty('YYYY-MM-DD', 'date', null, null) as string, /^\d{4}-\d\d-\d\d$/);
  });

  it('msg reads the message, only when there is one', () => {
    const msg = { payload: { a: 1 } };
    assert.equal(evaluateNodeProperty('payload.a', 'msg', null, msg), 1);
    assert.equal(evaluateNodeProperty('payload.a', 'msg', null, null), 'payload.a');
    assert.throws(() => evaluateNodeProperty('missing.a', 'msg', null, msg), TypeError);
  });

  it('with a callback, returns undefined and reports results and msg errors through it', async () => {
    const ok = await evaluateAsync('5', 'num', null, null);
    assert.deepEqual(ok, { err: null, result: 5, returned: undefined });
    const bad = await evaluateAsync('missing.a', 'msg', null, {});
    assert.ok(bad.err instanceof TypeError);
    assert.equal(bad.result, undefined);
  });

  it('flow and global read context, with a store prefix and [msg.x] keys', async () => {
    const node = makeNode();
    node.context().flow!.set('counts', { red: 3 });
    node.context().global.set('g', 'global value');
    assert.equal(evaluateNodeProperty('counts.red', 'flow', node, null), 3);
    assert.equal(evaluateNodeProperty('#:(memory)::counts.red', 'flow', node, null), 3);
    assert.equal(evaluateNodeProperty('counts[msg.colour]', 'flow', node, { colour: 'red' }), 3);
    assert.equal(evaluateNodeProperty('g', 'global', node, null), 'global value');
    assert.equal(evaluateNodeProperty('g', 'global', null, null), 'g', 'no node: value unchanged');
    assert.deepEqual(await evaluateAsync('counts.red', 'flow', node, null), { err: undefined, result: 3, returned: undefined });
  });

  it('env reads NR_NODE_*, the flow env, then process.env, with ${} templates', () => {
    process.env.RUNNEL_TEST_ENV = 'from process';
    try {
      const bare = { id: 'n2', context: () => { throw new Error('unused'); } } as UtilNode;
      assert.equal(evaluateNodeProperty('RUNNEL_TEST_ENV', 'env', bare, null), 'from process');
      assert.equal(evaluateNodeProperty('${RUNNEL_TEST_ENV}', 'env', null, null), 'from process');
      const node = makeNode({ FLOW_VAR: 'tab value', NUM: 7 });
      assert.equal(evaluateNodeProperty('FLOW_VAR', 'env', node, null), 'tab value');
      assert.equal(evaluateNodeProperty('NUM', 'env', node, null), 7);
      assert.equal(evaluateNodeProperty('a-${FLOW_VAR}-${NR_NODE_NAME}-${MISSING}-b', 'env', node, null), 'a-tab value-my node--b');
      assert.equal(evaluateNodeProperty('NR_NODE_ID', 'env', node, null), 'n1');
      assert.equal(evaluateNodeProperty('${NR_NODE_PATH}', 'env', node, null), 'f1/n1');
      assert.equal(evaluateNodeProperty('MISSING', 'env', node, null), '');
      // With a flow the flow decides: it answers for process env itself.
      assert.equal(evaluateNodeProperty('RUNNEL_TEST_ENV', 'env', node, null), '');
    } finally {
      delete process.env.RUNNEL_TEST_ENV;
    }
  });

  it('jsonata needs a callback', async () => {
    assert.throws(() => evaluateNodeProperty('1+1', 'jsonata', null, {}), {
      message: 'Calls to RED.util.evaluateJSONataExpression must include a callback.',
    });
    assert.deepEqual(await evaluateAsync('payload * 2', 'jsonata', null, { payload: 21 }), { err: null, result: 42, returned: undefined });
  });

  it('leaves unknown types unchanged', () => {
    assert.equal(evaluateNodeProperty('x', 'cred', null, null), 'x');
    assert.equal(evaluateNodeProperty('x', 'whatever', null, null), 'x');
  });
});

describe('getSetting / evaluateEnvProperty', () => {
  it('prefers an explicit flow over the node flow', () => {
    const node = makeNode({ X: 'node flow' });
    assert.equal(getSetting(node, 'X', { getSetting: () => 'explicit' }), 'explicit');
    assert.equal(getSetting(node, 'X'), 'node flow');
  });

  it('gives "" for an undefined whole-value lookup', () => {
    assert.equal(evaluateEnvProperty('${RUNNEL_SURELY_UNSET}', null), '');
  });
});

describe('JSONata helpers', () => {
  const run = (expr: string, node: UtilNode | null, msg: unknown) =>
    new Promise<{ err: Error | null; result: unknown }>((resolve) => {
      evaluateJSONataExpression(prepareJSONataExpression(expr, node), msg, (err, result) => resolve({ err, result }));
    });

  it('binds $flowContext, $globalContext, $env and $clone', async () => {
    const contexts = new ContextManager({ log: quietLog, functionGlobalContext: { seeded: 'yes' } });
    const node = makeNode({ E: 'env value' }, contexts);
    node.context().flow!.set('f', { v: 5 });
    assert.deepEqual(await run('$flowContext("f.v") + 1', node, {}), { err: null, result: 6 });
    assert.deepEqual(await run('$globalContext("seeded")', node, {}), { err: null, result: 'yes' });
    assert.deepEqual(await run('$env("E")', node, {}), { err: null, result: 'env value' });
    assert.deepEqual(await run('$env("NOPE_UNSET")', node, {}), { err: null, result: '' });
    assert.deepEqual(await run('$clone(payload)', node, { payload: { a: 1 } }), { err: null, result: { a: 1 } });
  });

  it('evaluates legacy msg.* expressions against {msg}', async () => {
    assert.deepEqual(await run('msg.payload & "!"', null, { payload: 'hi' }), { err: null, result: 'hi!' });
  });

  it('reports evaluation errors to the callback', async () => {
    const { err } = await run('$notAFunction()', null, {});
    assert.equal((err as Error & { code?: string }).code, 'T1006');
    assert.equal(err?.message, 'Attempted to invoke a non-function');
  });

  it('throws on syntax errors when preparing', () => {
    assert.throws(() => prepareJSONataExpression('1 +', null));
  });
});

describe('formatDate', () => {
  const d = new Date(2024, 0, 5, 7, 8, 9, 12);
  it('formats the supported moment tokens in local time', () => {
    assert.equal(formatDate(d, 'YYYY-MM-DD HH:mm:ss.SSS'), '2024-01-05 07:08:09.012');
    assert.equal(formatDate(d, 'YY/M/D H'), '24/1/5 7');
    assert.equal(formatDate(d, '[Year] YYYY'), 'Year 2024');
    assert.match(formatDate(d, 'Z'), /^[+-]\d\d:\d\d$/);
  });
});

describe('process env isolation', () => {
  before(() => { process.env.RUNNEL_ISO = 'x'; });
  after(() => { delete process.env.RUNNEL_ISO; });
  it('reads process.env without a node', () => {
    assert.equal(getSetting(undefined, 'RUNNEL_ISO'), 'x');
  });
});
