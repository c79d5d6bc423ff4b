/**
 * Code a function node builds at run time (`eval(text)`, `new Function(...)`, and the async,
 * generator and async-generator function constructors reached through `(async () => {}).constructor`)
 * would escape the guard's instrumentation. In a guarded context these entry points are replaced
 * by ones that instrument the text with the same checks (guard.ts) before compiling it in the same
 * context, and the context's own string compilation is switched off (vm `codeGeneration`), so a
 * path missed here fails with an EvalError instead of running unguarded. WebAssembly is switched off
 * with it: compiled wasm cannot be instrumented and an endless wasm loop would hold the process.
 *
 * Differences from plain JavaScript, documented in the README: `eval` always runs in the global
 * scope (as an indirect eval does), so code that evals to read the caller's local variables does
 * not see them.
 *
 * `Atomics.wait` blocks the thread it runs on, and function nodes run on the one that serves the
 * admin API: in every context it throws, as it does on a browser's main thread.
 */
import vm from 'node:vm';
import { instrumentCode, type Guard } from './guard.js';

/** Replaces the context's code-building entry points; `compile` is the host's instrumenting compiler. */
const INSTALL = `(function (compile) {
  const constructors = [
    ['function', Function],
    ['async function', (async function () {}).constructor],
    ['function*', (function* () {}).constructor],
    ['async function*', (async function* () {}).constructor],
  ];
  for (const [kind, original] of constructors) {
    const replacement = function Function(...args) { return compile(kind, args); };
    Object.defineProperty(replacement, 'name', { value: original.name });
    replacement.prototype = original.prototype;
    Object.defineProperty(original.prototype, 'constructor', { value: replacement, writable: true, configurable: true });
    if (kind === 'function') globalThis.Function = replacement;
  }
  const evaluate = (text) => typeof text === 'string' ? compile('eval', [text]) : text;
  Object.defineProperty(evaluate, 'name', { value: 'eval' });
  globalThis.eval = evaluate;
})`;

const WAIT = `(function () {
  Atomics.wait = function wait() { throw new TypeError('Atomics.wait cannot be called in a function node: it would block the runtime'); };
})`;

/** Context options for a guarded context (code building goes through `installRuntimeCode`). */
export const GUARDED_CONTEXT = { codeGeneration: { strings: false, wasm: false } } as const;

export function blockAtomicsWait(context: vm.Context): void {
  (vm.runInContext(WAIT, context) as () => void)();
}

/**
 * Makes `eval` and the function constructors of `context` compile instrumented code checked by
 * `guard`, which the built code reaches as the context global `guardName`.
 */
export function installRuntimeCode(context: vm.Context, guard: Guard, guardName: string): void {
  Object.defineProperty(context, guardName, { value: guard, enumerable: false });
  const compile = (kind: string, args: unknown[]): unknown => {
    const source = kind === 'eval' ? String(args[0]) : functionText(kind, args);
    return new vm.Script(instrumentCode(source, guardName), { filename: 'code built at run time' }).runInContext(context);
  };
  (vm.runInContext(INSTALL, context) as (c: typeof compile) => void)(compile);
}

/** The text V8 builds for `new Function(p1, p2, body)`. */
function functionText(kind: string, args: unknown[]): string {
  const params = args.slice(0, -1).map(String).join(',');
  const body = args.length > 0 ? String(args[args.length - 1]) : '';
  return `(${kind} anonymous(${params}\n) {\n${body}\n})`;
}
