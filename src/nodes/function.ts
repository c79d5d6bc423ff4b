/**
 * The function node: user JavaScript run per message with Node-RED's sandbox API. See
 * function-sandbox.ts for how code is compiled and isolated.
 *
 * Runaway code: the time limit is the node's own `timeout` (seconds, as in Node-RED) or else the
 * global `functionTimeout` (ms; 0 = none). It bounds every synchronous run of the node's code
 * (message, initialize, finalize, timer and promise callbacks) through checks compiled into the
 * code (function-guard.ts), so a call costs no watchdog; code without a limit is not instrumented.
 */
import { types } from 'node:util';
import { Node, type DoneFn, type Msg, type NodeConfig } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';
import { Guard } from './function-guard.js';
import { NodeTimers } from './lib/node-timers.js';
import { Sandbox, validLibVar, type BoundCode, type Compiled, type NodeScope, type SourceParts } from './function-sandbox.js';

type NodeApi = Record<string, unknown>;

/** Node-RED's test: code that calls node.done() itself completes its own messages. */
const CALLS_DONE = /node\.done\s*\(\s*\)/;
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

export default function (RED: RedApi) {
  const settings = RED.settings as Record<string, unknown>;
  const allowHostAccess = settings.functionAllowHostAccess === true;
  const allowModules = allowHostAccess || settings.functionExternalModules === true;
  const defaultTimeout = typeof settings.functionTimeout === 'number' ? settings.functionTimeout : 0;
  const sandbox = new Sandbox({ allowHostAccess, userDir: String(settings.userDir), redUtil: RED.util });

  class FunctionNode extends Node {
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

    constructor(config: NodeConfig) {
      super(config);
      const func = typeof config.func === 'string' ? config.func : '';
      this.outputCount = Number(config.outputs ?? 1) || 0;
      this.autoDone = !CALLS_DONE.test(func);
      this.usesNode = MENTIONS_NODE.test(func);
      const libs = this.loadLibs(config.libs);
      this.libs = libs;
      const parts: SourceParts = {
        func,
        initialize: typeof config.initialize === 'string' ? config.initialize.trim() : '',
        finalize: typeof config.finalize === 'string' ? config.finalize.trim() : '',
        libVars: Object.keys(libs),
      };
      this.hasInit = parts.initialize !== '';
      this.hasFin = parts.finalize !== '';
      const limit = Number(config.timeout) > 0 ? Number(config.timeout) * 1000 : defaultTimeout;
      this.guard = limit > 0 ? new Guard(limit, this.name || this.id) : null;
      this.on('input', (msg: Msg, _send: unknown, done: DoneFn) => {
        if (this.ready) this.run(msg, done);
        else this.pending?.push({ msg, done });
      });
      this.on('close', () => this.shutdown());
      try {
        const acquired = sandbox.acquire(parts, this.guard !== null, `Function node:${this.id}${this.name ? ` [${this.name}]` : ''}`);
        this.key = acquired.key;
        this.compiled = acquired.compiled;
      } catch (err) {
        this.pending = null;
        this.error(hostError(err));
        return;
      }
      this.start();
    }

    private code(): BoundCode {
      if (!this.bound) {
        this.api = this.createApi();
        this.bound = this.compiled!.factory(this.scope(this.libs));
      }
      return this.bound;
    }

    private loadLibs(raw: unknown): Record<string, unknown> {
      const list = Array.isArray(raw) ? (raw as { var?: unknown; module?: unknown }[]).filter((l) => l && l.var) : [];
      const libs: Record<string, unknown> = {};
      if (list.length === 0) return libs;
      if (!allowModules) {
        throw new Error('Function node libs are not allowed: set functionExternalModules (or functionAllowHostAccess) to true in settings');
      }
      for (const lib of list) {
        if (!validLibVar(lib.var)) throw new Error(`Invalid module variable name: ${String(lib.var)}`);
        try {
          libs[lib.var] = RED.require(String(lib.module));
        } catch (err) {
          throw new Error(`Failed to load module ${String(lib.module)}: ${(err as Error).message}`);
        }
      }
      return libs;
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
          if (event === 'input') throw new Error('Cannot add listener to input event within Function');
          this.on(event, listener);
        },
        status: (status: Parameters<Node['status']>[0]) => {
          this.clearStatus = true;
          this.status(status);
        },
        send: (msgs: unknown, clone?: boolean) => this.sendResults(RED.util.generateId(), msgs, clone !== false),
        done: () => {},
      };
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
      const code = this.code();
      const node = this.usesNode ? this.messageApi(msg, done) : this.api;
      let result: unknown;
      try {
        this.guard?.enter();
        result = code.body(msg, node);
      } catch (err) {
        done(hostError(err));
        return;
      }
      if (result !== null && typeof result === 'object' && typeof (result as Promise<unknown>).then === 'function') {
        (result as Promise<unknown>).then(
          (value) => this.finish(msg, value, done),
          (err) => done(hostError(err)),
        );
      } else {
        this.finish(msg, result, done);
      }
    }

    private finish(msg: Msg, result: unknown, done: DoneFn): void {
      if (result !== null && result !== undefined) this.sendResults(msg._msgid as string, result, false);
      if (this.autoDone) done();
    }

    /** Node-RED's sendResults: every message gets the input's id; node.send clones the first one. */
    private sendResults(msgid: string, msgs: unknown, cloneFirst: boolean): void {
      if (msgs === null || msgs === undefined) return;
      let first = cloneFirst;
      const prepare = (m: unknown): Msg | null => {
        if (m === null || m === undefined) return null;
        if (!isMessage(m)) {
          this.error(`Function tried to send a message of type ${describeType(m)}`);
          return null;
        }
        const out = first ? RED.util.cloneMessage(m) : m;
        first = false;
        out._msgid = msgid;
        return out;
      };
      if (!Array.isArray(msgs)) {
        const m = prepare(msgs);
        if (m) this.send(m);
        return;
      }
      let count = 0;
      const outputs = msgs.map((entry: unknown) => {
        if (!Array.isArray(entry)) {
          const m = prepare(entry);
          if (m) count++;
          return m;
        }
        const list: Msg[] = [];
        for (const item of entry) {
          const m = prepare(item);
          if (m) list.push(m);
        }
        count += list.length;
        return list;
      });
      if (count > 0) this.send(outputs);
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
      if (this.clearStatus) this.status({});
      if (this.key) sandbox.release(this.key);
      this.compiled = null;
      this.bound = null;
    }
  }

  RED.nodes.registerType('function', FunctionNode);
}
