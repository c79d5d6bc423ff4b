/**
 * Where function-node code runs. Node-RED builds one vm context per function node and compiles
 * its code there: about 1 ms and a full set of JS intrinsics per node, so 10,000 nodes take
 * seconds and hundreds of MB. Here the code is compiled once per distinct generated text, and
 * the nodes whose text is identical share one lazily created context; every per-node value
 * (node API, context, env, timers, libraries) is passed to a per-node closure rather than kept
 * in the context's globals.
 *
 * Isolation kept: the code never sees host globals (`process`, `require`, the file system)
 * unless `functionAllowHostAccess` is set, and nodes with different code never share globals
 * or intrinsics. Isolation given up: nodes with *identical* code share the context's global
 * object, so a sloppy undeclared assignment (`count = 1`) or a change to `Array.prototype` in
 * one is seen by its twins. As in Node-RED, node:vm is not a security boundary: host objects
 * handed to the code (msg, Buffer, console) lead back to the host's `Function`.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import util from 'node:util';
import vm from 'node:vm';

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

/** The trampoline a guarded call runs through, so that the vm `timeout` applies to it. */
const GUARD = new vm.Script('__guard__.f(__guard__.a, __guard__.b)', { filename: 'function-node-guard' });

export interface SourceParts {
  func: string;
  initialize: string;
  finalize: string;
  libVars: string[];
}

/** The code may suspend, so the body must be an async function (Node-RED always makes it one). */
const AWAIT = /\bawait\b/;
const IDENT = /^[A-Za-z_$][\w$]*$/;

/**
 * Builds the text compiled for a node: a factory taking the per-node scope and returning the
 * body, initialize and finalize functions. `node` is a parameter so each call can carry its own
 * `send`/`done` (they need the message's id and completion callback).
 */
export function generate(parts: SourceParts): string {
  const libs = parts.libVars.map((v) => `var ${v} = __scope__.libs[${JSON.stringify(v)}];`).join('');
  const asyncBody = AWAIT.test(parts.func) ? 'async ' : '';
  const init = parts.initialize ? `async function (node) {\n${parts.initialize}\n}` : 'null';
  const fin = parts.finalize ? `function (node) {\n${parts.finalize}\n}` : 'null';
  return (
    '(function (__scope__) {' +
    'var context = __scope__.context, flow = __scope__.flow, global = __scope__.global, env = __scope__.env,' +
    ' setTimeout = __scope__.setTimeout, clearTimeout = __scope__.clearTimeout,' +
    ' setInterval = __scope__.setInterval, clearInterval = __scope__.clearInterval;' +
    libs +
    `return { body: ${asyncBody}function (msg, node) {\n${parts.func}\n},\ninit: ${init},\nfin: ${fin} };\n})`
  );
}

/** Names a library variable may not take: they would hide the sandbox's own. */
export const RESERVED_NAMES = new Set([
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

  constructor(options: SandboxOptions) {
    this.options = options;
  }

  /**
   * Compiles (or reuses) the code. Throws the SyntaxError of bad code. Binding to a node is left
   * to the caller, when the node first needs it: a deployed node that never runs costs no closures.
   */
  acquire(text: string, filename: string): Compiled {
    let entry = this.entries.get(text);
    if (!entry) {
      const context = this.createContext();
      const factory = new vm.Script(text, { filename }).runInContext(context) as Factory;
      entry = { context, factory, users: 0 };
      this.entries.set(text, entry);
    }
    entry.users++;
    return entry;
  }

  release(text: string): void {
    const entry = this.entries.get(text);
    if (entry && --entry.users <= 0) this.entries.delete(text);
  }

  /** Calls `f(a, b)` inside `context` with the vm watchdog stopping it after `timeout` ms. */
  static guardedCall(context: vm.Context, timeout: number, f: (a: unknown, b: unknown) => unknown, a: unknown, b: unknown): unknown {
    const guard = context.__guard__ as { f: unknown; a: unknown; b: unknown };
    guard.f = f;
    guard.a = a;
    guard.b = b;
    try {
      return GUARD.runInContext(context, { timeout });
    } finally {
      guard.f = guard.a = guard.b = null;
    }
  }

  private createContext(): vm.Context {
    const globals: Record<string, unknown> = {
      console,
      util,
      Buffer,
      Date,
      RED: { util: this.options.redUtil },
      promisify: util.promisify,
      __guard__: { f: null, a: null, b: null },
    };
    if (this.options.allowHostAccess) {
      globals.process = process;
      globals.require = createRequire(path.join(this.options.userDir, 'package.json'));
    }
    return vm.createContext(globals, { name: 'function node' });
  }
}

/**
 * Whether code could spin forever synchronously: a loop statement, dynamic code, or a `catch`
 * (recursion retried from a catch grows exponentially). Straight-line code without these ends
 * or overflows the stack. Regular-expression backtracking is the known exception.
 */
const MAY_SPIN = /\b(for|while|do|eval|Function|constructor|catch)\b/;

export function mayRunAway(parts: SourceParts): boolean {
  return parts.libVars.length > 0 || MAY_SPIN.test(parts.func);
}
