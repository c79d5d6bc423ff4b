/**
 * The function node: user JavaScript run per message with Node-RED's sandbox API. See
 * sandbox.ts for how code is compiled and isolated.
 *
 * Runaway code: the time limit is the node's own `timeout` (seconds, as in Node-RED) or else
 * `globalFunctionTimeout` (seconds; 0 = none, Node-RED's default; Runnel's is 1 s, as long as a
 * runaway may hold every other flow and the admin API). It bounds every synchronous run of the node's code
 * (message, initialize, finalize, timer and promise callbacks) through checks compiled into the
 * code (guard.ts), so a call costs no watchdog; code without a limit is not instrumented.
 */
import { types } from 'node:util';
import { Guard, type TimeLimit } from './guard.js';
import { NodeTimers } from '../lib/node-timers.js';
import { callsDone } from './done.js';
import { errorText } from './error.js';
import { LinkCalls } from './linkcall.js';
import { Sandbox, validLibVar, type BoundCode, type Compiled, type NodeScope, type SourceParts } from './sandbox.js';
import type { DoneFn, Msg, NodeConfig, NodeInstance, RedApi } from '../../runtime/red-api/red-api-types.js';

type NodeApi = Record<string, unknown>;

const MENTIONS_NODE = /\bnode\b/;

/** Errors thrown in the sandbox come from another realm; host code (logs, catch nodes) wants ours. */
function hostError(err: unknown): unknown {
  if (err instanceof Error || !types.isNativeError(err)) return err;
  const e = err as Error & { code?: unknown };
  const copy = new Error(e.message) as Error & { code?: unknown };
  copy.name = e.name;
  if (e.stack) copy.stack = e.stack;
  if (e.code !== undefined) copy.code = e.code;
  return copy;
}

function describeType(value: unknown): string {
  if (Buffer.isBuffer(value)) return 'Buffer';
  if (Array.isArray(value)) return 'Array';
  return typeof value;
}

const isMessage = (m: unknown): m is Msg => typeof m === 'object' && m !== null && !Buffer.isBuffer(m) && !Array.isArray(m);

interface LibSpec {
  var: string;
  module: string;
}

/** Entries without a variable name are ignored, as in Node-RED. */
function libSpecs(raw: unknown): LibSpec[] {
  if (!Array.isArray(raw)) return [];
  return (raw as { var?: unknown; module?: unknown }[])
    .filter((l) => l && typeof l === 'object' && l.var)
    .map((l) => ({ var: l.var as string, module: typeof l.module === 'string' ? l.module : '' }));
}

export default function (RED: RedApi) {
  const settings = RED.settings as Record<string, unknown>;
  const allowHostAccess = settings.functionAllowHostAccess === true;
  // Node-RED allows libs unless the setting is explicitly false.
  const allowModules = settings.functionExternalModules !== false;
  const globalSeconds = typeof settings.globalFunctionTimeout === 'number' ? settings.globalFunctionTimeout : 0;
  const globalLimit: TimeLimit | null = globalSeconds > 0
    ? { ms: globalSeconds * 1000, raise: `globalFunctionTimeout (${globalSeconds} s, in the settings file) or give the node a timeout (Setup tab)` }
    : null;
  const sandbox = new Sandbox({ allowHostAccess, userDir: String(settings.userDir), redUtil: RED.util });

  class FunctionNode extends RED.nodes.Node {
    outputCount: number;
    /** Releases the compiled code in the sandbox ('' when compiling failed). */
    private key = '';
    private compiled: Compiled | null = null;
    /** The code bound to this node, made on first use (see Sandbox.acquire). */
    private bound: BoundCode | null = null;
    private libs: Record<string, unknown>;
    private hasInit: boolean;
    private hasFin: boolean;
    /** Null when there is no time limit. */
    private readonly guard: Guard | null;
    private autoDone: boolean;
    private usesNode: boolean;
    private api: NodeApi | null = null;
    private ready = false;
    private pending: { msg: Msg; done: DoneFn }[] | null = [];
    /** Made with the code's scope, on first use. */
    private timers: NodeTimers | null = null;
    private clearStatus = false;
    /** sendResults' count of messages prepared so far in the current call. */
    private prepared = 0;
    private cloneFirst = false;
    private readonly linkCalls: LinkCalls;

    constructor(config: NodeConfig) {
      super(config);
      // Node-RED's function node keeps its name even when empty (catch nodes see source.name "").
      this.name = config.name;
      const func = typeof config.func === 'string' ? config.func : '';
      this.outputCount = Number(config.outputs ?? 1) || 0;
      this.autoDone = !callsDone(func);
      this.usesNode = MENTIONS_NODE.test(func);
      const libs = this.checkLibs(libSpecs(config.libs));
      this.libs = {};
      const parts: SourceParts = {
        func,
        initialize: typeof config.initialize === 'string' ? config.initialize.trim() : '',
        finalize: typeof config.finalize === 'string' ? config.finalize.trim() : '',
        libVars: libs.map((l) => l.var),
      };
      this.hasInit = parts.initialize !== '';
      this.hasFin = parts.finalize !== '';
      const timeout = Number(config.timeout);
      const limit = timeout > 0 ? { ms: timeout * 1000, raise: `the node's timeout (${timeout} s, Setup tab)` } : globalLimit;
      this.guard = limit ? new Guard(limit, this.name || this.id) : null;
      this.linkCalls = new LinkCalls(RED, this);
      this.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
        if (this.ready) this.run(msg, done);
        else this.pending?.push({ msg, done });
      });
      this.on('close', () => this.shutdown());
      try {
        const acquired = sandbox.acquire(parts, limit, `Function node:${this.id}${this.name ? ` [${this.name}]` : ''}`, this.name || this.id);
        this.key = acquired.key;
        this.compiled = acquired.compiled;
      } catch (err) {
        this.pending = null;
        this.error(hostError(err));
        return;
      }
      if (libs.length === 0) this.start();
      else this.importLibs(libs);
    }

    private code(): BoundCode {
      if (!this.bound) {
        this.api = this.createApi();
        this.bound = this.compiled!.factory(this.scope(this.libs));
      }
      return this.bound;
    }

    private checkLibs(libs: LibSpec[]): LibSpec[] {
      if (libs.length === 0) return libs;
      if (!allowModules) throw new Error('Function node not allowed to load external modules');
      let invalid = false;
      for (const lib of libs) {
        if (validLibVar(lib.var)) continue;
        this.error(`Invalid module variable name: ${String(lib.var)}`);
        invalid = true;
      }
      if (invalid) throw new Error('Function node failed to load external modules');
      return libs;
    }

    /** Node-RED imports libs (so ESM-only packages work) and holds messages until they are loaded. */
    private importLibs(libs: LibSpec[]): void {
      const loads = libs.map(async (lib) => {
        if (!lib.module) return;
        try {
          const ns = (await RED.import(lib.module)) as Record<string, unknown>;
          this.libs[lib.var] = 'default' in ns ? ns.default : ns;
        } catch (err) {
          this.error(`Failed to load module ${lib.module}: ${String(err)}`);
          throw err;
        }
      });
      Promise.all(loads).then(
        () => {
          if (this.compiled) this.start();
        },
        () => {
          this.pending = null;
          this.error('Function node failed to load external modules');
        },
      );
    }

    private scope(libs: Record<string, unknown>): NodeScope {
      const ctx = this.context();
      const timers = (this.timers = new NodeTimers((fn, args) => this.callback(fn, args)));
      return {
        context: ctx,
        flow: ctx.flow,
        global: ctx.global,
        env: { get: (name: string) => RED.util.getSetting(this, name) },
        setTimeout: timers.setTimeout,
        clearTimeout: timers.clearTimeout,
        setInterval: timers.setInterval,
        clearInterval: timers.clearInterval,
        libs,
        guard: this.guard,
      };
    }

    private callback(fn: (...a: unknown[]) => void, args: unknown[]): void {
      this.guard?.enter();
      try {
        fn(...args);
      } catch (err) {
        this.error(hostError(err), {});
      }
    }

    /** The `node` object the code sees; per-message copies override send and done. */
    private createApi(): NodeApi {
      return {
        id: this.id,
        name: this.name,
        path: `${this._flow.path}/${this._alias ?? this.id}`,
        outputCount: this.outputCount,
        log: (m: unknown) => this.log(m),
        warn: (m: unknown) => this.warn(m),
        error: (err: unknown, msg?: Msg) => this.error(hostError(err), msg),
        debug: (m: unknown) => this.debug(m),
        trace: (m: unknown) => this.trace(m),
        on: (event: string, listener: (...args: unknown[]) => void) => {
          if (event === 'input') throw new Error("Cannot add listener to 'input' event within Function");
          this.on(event, listener);
        },
        status: (status: Parameters<NodeInstance['status']>[0]) => {
          this.clearStatus = true;
          this.status(status);
        },
        send: (msgs: unknown, clone?: boolean) => this.sendResults(RED.util.generateId(), msgs, clone !== false),
        done: () => {},
        linkcall: (target: unknown, msg: unknown, options?: unknown) => this.linkCalls.call(target, msg, options),
      };
    }

    /** A return-mode link out answering a node.linkcall() of this node's code. */
    returnLinkMessage(id: string, msg: Msg): void {
      this.linkCalls.returnLinkMessage(id, msg);
    }

    private messageApi(msg: Msg, done: DoneFn): NodeApi {
      const api = Object.create(this.api!) as NodeApi;
      const msgid = msg._msgid as string;
      api.send = (msgs: unknown, clone?: boolean) => this.sendResults(msgid, msgs, clone !== false);
      api.done = done;
      return api;
    }

    private start(): void {
      const init = this.hasInit ? this.code().init : null;
      const ready = () => {
        this.ready = true;
        const queued = this.pending ?? [];
        this.pending = null;
        for (const { msg, done } of queued) this.run(msg, done);
      };
      if (!init) return ready();
      const failed = (err: unknown) => {
        this.pending = null;
        this.error(hostError(err));
      };
      try {
        this.guard?.enter();
        (init(this.api) as Promise<unknown>).then(ready, failed);
      } catch (err) {
        failed(err);
      }
    }

    private run(msg: Msg, done: DoneFn): void {
      // Called detached so its stack frames carry no name (see sandbox.ts).
      const body = this.code().body;
      const node = this.usesNode ? this.messageApi(msg, done) : this.api;
      let result: unknown;
      try {
        this.guard?.enter();
        result = body(msg, node);
      } catch (err) {
        this.fail(msg, err, done);
        return;
      }
      if (result !== null && typeof result === 'object' && typeof (result as Promise<unknown>).then === 'function') {
        (result as Promise<unknown>).then(
          (value) => this.finish(msg, value, done),
          (err) => this.fail(msg, err, done),
        );
      } else {
        this.finish(msg, result, done);
      }
    }

    /** As Node-RED, a thrown Error is left on msg.error (catch nodes then see it as msg._error). */
    private fail(msg: Msg, err: unknown, done: DoneFn): void {
      if (err !== null && typeof err === 'object' && Object.hasOwn(err, 'stack')) msg.error = err;
      done(errorText(err));
    }

    private finish(msg: Msg, result: unknown, done: DoneFn): void {
      if (result !== null && result !== undefined) this.sendResults(msg._msgid as string, result, false);
      if (this.autoDone) done();
    }

    /**
     * Node-RED's sendResults: every message gets the input's id and node.send clones the first
     * one. A falsy value where an output's message or list belongs stands for "nothing on this
     * output"; inside a list only null and undefined do.
     */
    private sendResults(msgid: string, msgs: unknown, cloneFirst: boolean): void {
      if (!msgs) return;
      this.prepared = 0;
      this.cloneFirst = cloneFirst;
      if (!Array.isArray(msgs)) {
        const m = this.prepare(msgid, msgs);
        if (m) this.send(m);
        return;
      }
      const outputs = msgs.map((entry: unknown) => {
        if (!entry) return null;
        if (!Array.isArray(entry)) return this.prepare(msgid, entry);
        const list: Msg[] = [];
        for (const item of entry) {
          if (item === null || item === undefined) continue;
          const m = this.prepare(msgid, item);
          if (m) list.push(m);
        }
        return list;
      });
      if (this.prepared > 0) this.send(outputs);
    }

    private prepare(msgid: string, m: unknown): Msg | null {
      if (!isMessage(m)) {
        this.error(`Function tried to send a message of type ${describeType(m)}`);
        return null;
      }
      const out = this.cloneFirst && this.prepared === 0 ? RED.util.cloneMessage(m) : m;
      this.prepared++;
      out._msgid = msgid;
      return out;
    }

    private shutdown(): void {
      const fin = this.compiled && this.hasFin ? this.code().fin : null;
      if (fin) {
        const api = Object.create(this.api!) as NodeApi;
        api.send = () => this.error('Cannot send from close function');
        try {
          this.guard?.enter();
          fin(api);
        } catch (err) {
          this.error(hostError(err));
        }
      }
      this.timers?.clearAll();
      this.linkCalls.clear();
      if (this.clearStatus) this.status({});
      if (this.key) sandbox.release(this.key);
      this.compiled = null;
      this.bound = null;
    }
  }

  RED.nodes.registerType('function', FunctionNode);
}
