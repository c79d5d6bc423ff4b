/**
 * Where function-node code runs. Node-RED builds one vm context per function node and compiles
 * its code there: about 1 ms and a full set of JS intrinsics per node, so 10,000 nodes take
 * seconds and hundreds of MB. Here the code is compiled once per distinct generated text, and
 * the nodes whose text is identical share one lazily created context; every per-node value
 * (node API, context, env, timers, libraries) is passed to a per-node closure rather than kept
 * in the context's globals. The generated code's own variables (the scope parameter, the guard of
 * guard.ts) carry a random suffix per runtime, so user code cannot name them.
 *
 * Isolation kept: the code never sees host globals (`process`, `require`, the file system)
 * unless `functionAllowHostAccess` is set, and nodes with different code never share globals
 * or intrinsics. Isolation given up: nodes with *identical* code share the context's global
 * object, so a sloppy undeclared assignment (`count = 1`) or a change to `Array.prototype` in
 * one is seen by its twins. As in Node-RED, node:vm is not a security boundary: host objects
 * handed to the code (msg, Buffer, console) lead back to the host's `Function`, whose code is
 * neither instrumented nor bounded.
 *
 * Catastrophic regular expressions: V8 falls back to its linear-time engine for a regular
 * expression that backtracks excessively (the flag set below, process-wide, so http-in routes
 * and nodes gain it too). That engine does not take backreferences or lookbehinds, so a pattern
 * using them still backtracks without bound inside one host call the guard cannot interrupt.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import util from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Guard, instrument, type TimeLimit } from './guard.js';
import { blockAtomicsWait, GUARDED_CONTEXT, installRuntimeCode } from './runtime-code.js';

v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

export interface SandboxOptions {
  allowHostAccess: boolean;
  userDir: string;
  redUtil: unknown;
}

/** The compiled parts of one node's code, bound to that node's API object. */
export interface BoundCode {
  body: (msg: unknown, node: unknown) => unknown;
  init: ((node: unknown) => unknown) | null;
  fin: ((node: unknown) => unknown) | null;
}

/** Per-node values the generated code reads; every member is a parameter, never a global. */
export interface NodeScope {
  context: unknown;
  flow: unknown;
  global: unknown;
  env: unknown;
  setTimeout: unknown;
  clearTimeout: unknown;
  setInterval: unknown;
  clearInterval: unknown;
  libs: Record<string, unknown>;
  /** Null when the code runs without a time limit (then it is compiled uninstrumented). */
  guard: Guard | null;
}

type Factory = (scope: NodeScope) => BoundCode;

/** Compiled code in its context; `factory(scope)` binds it to one node. */
export interface Compiled {
  readonly context: vm.Context;
  readonly factory: Factory;
}

interface Entry extends Compiled {
  users: number;
}

export interface SourceParts {
  func: string;
  initialize: string;
  finalize: string;
  libVars: string[];
}

/** The code may suspend, so the body must be an async function (Node-RED always makes it one). */
const AWAIT = /\bawait\b/;
const IDENT = /^[A-Za-z_$][\w$]*$/;

/** Names of the generated code's own variables; the random suffix keeps user code off them. */
interface Names {
  scope: string;
  guard: string;
}

/** Wraps one part as a function; `code` is the part, instrumented if the node has a time limit. */
function wrap(prefix: string, source: string, names: Names, guarded: boolean): string {
  const code = guarded ? instrument(source, prefix, '\n}', names.guard) : source;
  return `${prefix}${code}\n}`;
}

/**
 * Builds the text compiled for a node: a factory taking the per-node scope and returning the
 * body, initialize and finalize functions. `node` is a parameter so each call can carry its own
 * `send`/`done` (they need the message's id and completion callback).
 */
function generate(parts: SourceParts, names: Names, guarded: boolean): string {
  const s = names.scope;
  const libs = parts.libVars.map((v) => `var ${v} = ${s}.libs[${JSON.stringify(v)}];`).join('');
  const asyncBody = AWAIT.test(parts.func) ? 'async ' : '';
  const body = wrap(`${asyncBody}function (msg, node) {\n`, parts.func, names, guarded);
  const init = parts.initialize ? wrap('async function (node) {\n', parts.initialize, names, guarded) : 'null';
  const fin = parts.finalize ? wrap('function (node) {\n', parts.finalize, names, guarded) : 'null';
  return (
    `(function (${s}) {` +
    (guarded ? `const ${names.guard} = ${s}.guard;` : '') +
    `var context = ${s}.context, flow = ${s}.flow, global = ${s}.global, env = ${s}.env,` +
    ` setTimeout = ${s}.setTimeout, clearTimeout = ${s}.clearTimeout,` +
    ` setInterval = ${s}.setInterval, clearInterval = ${s}.clearInterval;` +
    libs +
    // Passed through a call so V8 infers no name for the body: called detached, its stack frames
    // end in `:line:col` as Node-RED's anonymous body's do (see error.ts).
    `return { body: ((f) => f)(${body}),\ninit: ${init},\nfin: ${fin} };\n})`
  );
}

/** Names a library variable may not take: they would hide the sandbox's own. */
const RESERVED_NAMES = new Set([
  'node', 'msg', 'context', 'flow', 'global', 'env', 'setTimeout', 'clearTimeout', 'setInterval',
  'clearInterval', 'console', 'util', 'Buffer', 'Date', 'RED', 'promisify', 'process', 'require',
]);

export function validLibVar(name: unknown): name is string {
  return typeof name === 'string' && IDENT.test(name) && !RESERVED_NAMES.has(name);
}

/** Contexts and compiled factories, shared by the nodes of one runtime and released with them. */
export class Sandbox {
  private readonly entries = new Map<string, Entry>();
  private readonly options: SandboxOptions;
  private readonly names: Names;

  constructor(options: SandboxOptions) {
    this.options = options;
    const suffix = randomBytes(6).toString('hex');
    this.names = { scope: `__scope_${suffix}`, guard: `__guard_${suffix}` };
  }

  /**
   * Compiles (or reuses) the code, instrumented when it has a time `limit` (null = none; see
   * guard.ts), and returns it with the key to release it by. Throws the SyntaxError of bad code.
   * Binding to a node is left to the caller, when the node first needs it: a deployed node that
   * never runs costs no closures. Code the node builds at run time is bounded by a guard of the
   * context, labelled `label` (the first node to compile the code).
   */
  acquire(parts: SourceParts, limit: TimeLimit | null, filename: string, label: string): { key: string; compiled: Compiled } {
    const guarded = limit !== null;
    const key = `${guarded ? `g${JSON.stringify(limit)}` : 'u'}${JSON.stringify(parts)}`;
    let entry = this.entries.get(key);
    if (!entry) {
      const script = new vm.Script(this.source(parts, guarded), { filename });
      const context = this.createContext(limit ? new Guard(limit, label) : null);
      const factory = script.runInContext(context) as Factory;
      entry = { context, factory, users: 0 };
      this.entries.set(key, entry);
    }
    entry.users++;
    return { key, compiled: entry };
  }

  release(key: string): void {
    const entry = this.entries.get(key);
    if (entry && --entry.users <= 0) this.entries.delete(key);
  }

  /**
   * Code acorn cannot parse is reported with V8's own SyntaxError, as Node-RED does. Should V8
   * accept what acorn refuses, acorn's error stands: code that has a time limit never runs
   * without it (a vm `timeout` fallback would cost 130 µs per call for a case not seen in practice).
   */
  private source(parts: SourceParts, guarded: boolean): string {
    if (!guarded) return generate(parts, this.names, false);
    try {
      return generate(parts, this.names, true);
    } catch (err) {
      new vm.Script(generate(parts, this.names, false));
      throw err;
    }
  }

  private createContext(guard: Guard | null): vm.Context {
    const globals: Record<string, unknown> = {
      console,
      util,
      Buffer,
      Date,
      RED: { util: this.options.redUtil },
      promisify: util.promisify,
    };
    if (this.options.allowHostAccess) {
      globals.process = process;
      globals.require = createRequire(path.join(this.options.userDir, 'package.json'));
    }
    const context = vm.createContext(globals, { name: 'function node', ...(guard ? GUARDED_CONTEXT : {}) });
    blockAtomicsWait(context);
    if (guard) installRuntimeCode(context, guard, this.names.guard);
    return context;
  }
}
