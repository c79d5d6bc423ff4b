import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Guard, instrument } from '../../src/nodes/function/guard.js';

const PREFIX = 'function (msg, node) {\n';
const SUFFIX = '\n}';
const CHECK = 'if(++G.n>1000)G.check();';
const guarded = (source: string) => instrument(source, PREFIX, SUFFIX, 'G');

/** Runs instrumented code as the node would, with a guard that only counts its checks. */
function run(source: string): { result: unknown; checks: number } {
  const guard = { n: 0, checks: 0, check() { this.n = 0; this.checks++; } };
  const body = new Function('G', `return ${PREFIX}${guarded(source)}${SUFFIX}`)(guard) as (msg: unknown, node: unknown) => unknown;
  return { result: body({}, {}), checks: guard.checks };
}

describe('instrument', () => {
  test('checks open every loop body; a body without braces is wrapped in a block', () => {
    assert.equal(guarded('while (true) {}'), `while (true) {${CHECK}}`);
    assert.equal(guarded('for (;;);'), `for (;;){${CHECK};}`);
    assert.equal(guarded('do x++; while (c)'), `do {${CHECK}x++;} while (c)`);
    assert.equal(guarded('for (const k in o) if (a) b; else c;'), `for (const k in o) {${CHECK}if (a) b; else c;}`);
    assert.equal(guarded('l: for (const x of y) continue l;'), `l: for (const x of y) {${CHECK}continue l;}`);
  });

  test('checks open every function body, after its directives; expression bodies become blocks', () => {
    assert.equal(guarded('function f(n) { return n; }'), `function f(n) {${CHECK} return n; }`);
    assert.equal(guarded('function s() { "use strict"\nreturn 1 }'), `function s() { "use strict";${CHECK}\nreturn 1 }`);
    assert.equal(guarded('const g = () => ({ a: 1 });'), `const g = () => {${CHECK}return ({ a: 1 })};`);
    assert.equal(guarded('while (a) g = (x) => x'), `while (a) {${CHECK}g = (x) => {${CHECK}return x}}`);
    assert.equal(guarded('class A { m() {} }'), `class A { m() {${CHECK}} }`);
  });

  test('the wrapper function itself gets no check and line breaks are kept', () => {
    const source = 'const a = 1;\n\nwhile (a) {\n  break;\n}\nreturn a;';
    const out = guarded(source);
    assert.equal(out.split('\n').length, source.split('\n').length);
    assert.ok(out.startsWith('const a = 1;\n'));
  });

  test('instrumented loops keep their results with continue, labels and break', () => {
    const { result, checks } = run(`
      const out = [];
      outer: for (let i = 0; i < 5; i++) {
        if (i === 1) continue;
        for (let j = 0; j < 5; j++) {
          if (j === 2) continue outer;
          if (i === 4) break outer;
          out.push(i * 10 + j);
        }
      }
      let k = 0, evens = 0;
      while (k < 3000) { k++; if (k % 2) continue; evens++; }
      do k--; while (k > 0)
      for (const x of [1, 2, 3]) if (x === 2) continue; else out.push(x);
      function strict() { 'use strict'; return this; }
      return [out, evens, k, strict() === undefined, [1, 2].map((x) => x * 2)];`);
    assert.deepEqual(result, [[0, 1, 20, 21, 30, 31, 1, 3], 1500, 0, true, [2, 4]]);
    assert.ok(checks >= 6, `3000 + 3000 iterations pass at least 6 checks (got ${checks})`);
  });

  test('code acorn cannot parse throws a SyntaxError', () => {
    assert.throws(() => guarded('while (true {}'), SyntaxError);
  });
});

describe('Guard', () => {
  test('arms on the first check, throws once over time, stays over time until the event loop turns', async () => {
    const guard = new Guard({ ms: 20, raise: 'the test limit' }, 'spin');
    guard.check();
    assert.throws(() => {
      for (;;) guard.check();
    }, { name: 'RangeError', message: 'Function node spin ran longer than 20 ms: raise the test limit if its work needs longer' });
    assert.throws(() => guard.check(), RangeError);
    // A microtask continuation (an await) is the same run: the event loop has not had a turn.
    await Promise.resolve();
    assert.throws(() => guard.check(), RangeError);
    await new Promise(setImmediate);
    guard.check();
    guard.check();
  });

  test('enter() starts a new run for back-to-back calls', () => {
    const guard = new Guard({ ms: 10, raise: 'the test limit' }, 'batch');
    guard.n = 500;
    guard.check();
    const end = performance.now() + 15;
    while (performance.now() < end);
    guard.enter();
    assert.equal(guard.n, 0);
    guard.check();
    guard.check();
  });
});
