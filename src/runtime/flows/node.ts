import { EventEmitter } from 'node:events';
import { types } from 'node:util';
import { cloneMessage, generateId } from '../util/index.js';
import { receiveWithHooks, sendWithHooks } from './hooked-delivery.js';
import type { LiveNode, NodeFlow } from './services.js';
import type { TypeCounters } from './stats.js';
import type { DoneFn, Msg, NodeConfig as ContractNodeConfig, NodeModuleInfo, NodeStatus, SendFn } from '../red-api/red-api-types.js';

export type { DoneFn, Msg, NodeStatus, SendFn };
type InputHandler = (this: Node, msg: Msg, send: SendFn, done: DoneFn) => unknown;
type CloseHandler = ((this: Node) => unknown) | ((this: Node, done: () => void) => unknown) | ((this: Node, removed: boolean, done: () => void) => unknown);

/**
 * The link from a configuration the runtime builds itself (subflow internals) to its flow. Configs
 * handed to module constructors never carry it: modules iterate their config (lodash `pickBy`
 * visits symbols too), so the flow under construction is known through `constructingIn` instead.
 */
export const FLOW = Symbol('runnel.flow');

/** The flow whose node constructor is running: what `RED.nodes.createNode` attaches the node to. */
let constructing: NodeFlow | undefined;
/**
 * The node whose constructor is running and the errors it reported meanwhile. A node that calls
 * `node.error` while it is being built (a function's syntax error, an invalid expression or
 * regex, a missing config node) is Node-RED's way of saying it cannot work as configured.
 */
let building: { id: string; errors: string[] } | undefined;

/**
 * Runs the constructor of node `id` with `flow` as the flow `createNode` attaches to; `errors`
 * are what that node reported with `node.error` before its constructor returned.
 */
export function constructingIn<T>(flow: NodeFlow, id: string, build: () => T): { node: T; errors: string[] } {
  const outer = { flow: constructing, building };
  const errors: string[] = [];
  constructing = flow;
  building = { id, errors };
  try {
    return { node: build(), errors };
  } finally {
    constructing = outer.flow;
    building = outer.building;
  }
}

export interface NodeConfig extends ContractNodeConfig {
  [FLOW]?: NodeFlow;
}

/**
 * The Node-RED node model. Contributed modules either extend nothing and call
 * `RED.nodes.createNode(this, config)` (their prototype is re-parented onto Node.prototype at
 * registration) or are ES classes; core nodes extend it as `RED.nodes.Node`. It implements the
 * contract's NodeInstance (red-api-types.ts). Field names are Node-RED's because modules read them.
 */
export class Node extends EventEmitter implements LiveNode {
  // `declare`: no class-field initialisers, which would cost a define per field per node.
  declare id: string;
  declare type: string;
  declare z?: string;
  declare g?: string;
  declare name?: string;
  declare _alias?: string;
  declare wires: string[][];
  /** Node-RED's count of wired targets over all outputs; dashboard widgets pass messages on only when it is non-zero. */
  declare _wireCount: number;
  /** Node-RED's shortcut target when exactly one wire leaves the node (some modules test it). */
  declare _wire?: string;
  declare credentials?: Record<string, unknown>;
  declare _flow: NodeFlow;
  declare _inputHandlers: InputHandler[];
  declare _closeCallbacks: CloseHandler[];
  declare _expectedDoneCount: number;
  declare _closed: boolean;
  declare _send: SendFn;
  declare _stats: TypeCounters;

  constructor(config: NodeConfig) {
    super();
    initNode(this, config);
  }

  /** Node-RED keeps a lone input handler here (null otherwise); some modules call it directly. */
  get _inputCallback(): InputHandler | null {
    return this._inputHandlers.length === 1 ? this._inputHandlers[0] : null;
  }

  /** Node-RED's list of input handlers once there are several (null otherwise). */
  get _inputCallbacks(): InputHandler[] | null {
    return this._inputHandlers.length > 1 ? this._inputHandlers : null;
  }

  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    if (event === 'input') {
      this._inputHandlers.push(listener as InputHandler);
      if (listener.length >= 3) this._expectedDoneCount++;
      return this;
    }
    if (event === 'close') {
      this._closeCallbacks.push(listener as CloseHandler);
      return this;
    }
    return super.on(event, listener);
  }

  override addListener(event: string | symbol, listener: (...args: any[]) => void): this {
    return this.on(event, listener);
  }

  override removeListener(event: string | symbol, listener: (...args: any[]) => void): this {
    if (event === 'input' || event === 'close') {
      const list: unknown[] = event === 'input' ? this._inputHandlers : this._closeCallbacks;
      const i = list.indexOf(listener);
      if (i >= 0) {
        list.splice(i, 1);
        if (event === 'input' && listener.length >= 3) this._expectedDoneCount--;
      }
      return this;
    }
    return super.removeListener(event, listener);
  }

  override off(event: string | symbol, listener: (...args: any[]) => void): this {
    return this.removeListener(event, listener);
  }

  override emit(event: string | symbol, ...args: any[]): boolean {
    if (event === 'input') {
      this._deliver(args[0] as Msg);
      return true;
    }
    return super.emit(event, ...args);
  }

  /** Sends one message to output 0, an array with one entry per output, or arrays of messages per output. */
  send(msg: Parameters<SendFn>[0]): void {
    if (msg === null || msg === undefined) return;
    const wires = this.wires;
    if (wires.length === 0) return;
    const services = this._flow.services;
    if (services.hooks.followsAny(msg)) {
      sendWithHooks(this, msg);
      return;
    }
    if (!Array.isArray(msg)) {
      if (typeof msg !== 'object') {
        this.error(new Error('Non-message object returned'), undefined);
        return;
      }
      if (!msg._msgid) msg._msgid = generateId();
      const targets = wires[0];
      if (!targets) return;
      for (let i = 0; i < targets.length; i++) {
        const target = services.nodes.get(targets[i]);
        if (target) {
          services.queue.push(target, i === 0 ? msg : cloneMessage(msg));
          this._stats.sent++;
        }
      }
      return;
    }
    let msgid: string | undefined;
    for (const out of msg) {
      if (out === null || out === undefined) continue;
      const first = Array.isArray(out) ? out.find((m) => m && typeof m === 'object') : out;
      if (first && typeof first === 'object' && first._msgid) {
        msgid = first._msgid;
        break;
      }
    }
    let sent = false;
    const outputs = Math.min(msg.length, wires.length);
    for (let o = 0; o < outputs; o++) {
      const out = msg[o];
      if (out === null || out === undefined) continue;
      const targets = wires[o];
      const list = Array.isArray(out) ? out : [out];
      const valid: Msg[] = [];
      for (const m of list) {
        if (m === null || m === undefined) continue;
        if (typeof m !== 'object') {
          this.error(new Error('Non-message object returned'), undefined);
          continue;
        }
        if (!m._msgid) m._msgid = msgid ??= generateId();
        valid.push(m);
      }
      // Wire by wire, then message by message: the order Node-RED delivers them in.
      for (let i = 0; i < targets.length; i++) {
        const target = services.nodes.get(targets[i]);
        if (!target) continue;
        for (const m of valid) {
          services.queue.push(target, sent ? cloneMessage(m) : m);
          sent = true;
        }
        this._stats.sent += valid.length;
      }
    }
  }

  /** Injects a message into this node's own input handlers. */
  receive(msg?: Msg): void {
    const m = msg || {};
    if (!m._msgid) m._msgid = generateId();
    this._deliver(m);
  }

  /** Runs the input handlers for one delivered message. */
  _deliver(msg: Msg): void {
    if (this._closed) return;
    this._stats.received++;
    const hooks = this._flow.services.hooks;
    if ((hooks.active.onReceive || hooks.active.postReceive) && hooks.follows(msg)) receiveWithHooks(this, msg, () => this._handle(msg));
    else this._handle(msg);
  }

  private _handle(msg: Msg): void {
    const handlers = this._inputHandlers;
    // A lone handler always gets a working done, whatever it declares (`done = noop` has length 2).
    const done = handlers.length === 1 ? makeLoneDone(this, msg) : this._expectedDoneCount > 0 ? makeDone(this, msg) : noDone;
    for (let i = 0; i < handlers.length; i++) {
      try {
        const result = handlers[i].call(this, msg, this._send, done);
        if (result && typeof (result as Promise<unknown>).then === 'function') {
          (result as Promise<unknown>).then(undefined, (err) => this.error(err, msg));
        }
      } catch (err) {
        this.error(err, msg);
      }
    }
  }

  updateWires(wires: string[][]): void {
    setWires(this, normaliseWires(wires));
  }

  context() {
    return this._flow.services.context.getNodeContext(this._alias ?? this.id, this._flow.contextId);
  }

  status(status: NodeStatus | string | number | boolean): void {
    let s: NodeStatus;
    if (typeof status === 'string' || typeof status === 'number' || typeof status === 'boolean') s = { text: String(status) };
    else s = { ...(status ?? {}) };
    if (s.text !== undefined && typeof s.text !== 'string') s.text = s.text === null ? '' : String(s.text);
    this._flow.handleStatus(this, s);
  }

  error(err: unknown, msg?: Msg): void {
    this._stats.errors++;
    if (building?.id === this.id) building.errors.push(logText(err));
    if (msg && typeof msg === 'object' && this._flow.handleError(this, err, msg)) return;
    this._log('error', err);
  }

  warn(message: unknown): void {
    this._log('warn', message);
  }

  log(message: unknown): void {
    this._log('info', message);
  }

  debug(message: unknown): void {
    this._log('debug', message);
  }

  trace(message: unknown): void {
    this._log('trace', message);
  }

  /** Node-RED's `_path` (NR_NODE_PATH): the flow's path, then the node's template id or own id. */
  get _path(): string {
    return `${this._flow.path}/${this._alias ?? this.id}`;
  }

  set _path(value: string) {
    Object.defineProperty(this, '_path', { value, writable: true, enumerable: false, configurable: true });
  }

  /** Node-RED's hidden `_module`: the node set providing this node's type. */
  get _module(): NodeModuleInfo | undefined {
    const set = this._flow.services.registry.getTypeSet(this.type);
    return set && { id: set.id, name: set.name, module: set.module, version: set.version, types: [...set.types], enabled: set.enabled };
  }

  /** Metrics are not collected; Node-RED returns false when they are off, and modules test that. */
  metric(): boolean {
    return false;
  }

  /** Runs the close handlers with Node-RED's arities, bounded by nodeCloseTimeout. */
  async close(removed = false): Promise<void> {
    this._closed = true;
    const services = this._flow.services;
    const closing = this._closeCallbacks.map((handler) => runCloseHandler(this, handler, removed));
    if (closing.length) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), services.settings.nodeCloseTimeout);
      });
      const outcome = await Promise.race([Promise.all(closing), timeout]);
      clearTimeout(timer);
      if (outcome === 'timeout') this._log('error', new Error('Close timed out'));
    }
    this._inputHandlers = [];
    this._closeCallbacks = [];
    super.removeAllListeners();
    services.context.deleteNodeContext(this._alias ?? this.id, this._flow.contextId);
  }

  _log(level: 'error' | 'warn' | 'info' | 'debug' | 'trace', message: unknown): void {
    const text = logText(message);
    const services = this._flow.services;
    // Node-RED's log object: a custom log handler finds the flow path there (and a subflow node's template id).
    const node = { id: this.id, type: this.type, z: this.z, name: this.name, path: this._flow.path, ...(this._alias ? { _alias: this._alias } : {}) };
    // Node-RED's --verbose prints an error's stack in place of its message.
    if (services.settings.verbose && types.isNativeError(message)) services.log[level]({ node, err: message }, logLineText(message));
    else services.log[level]({ node }, logLineText(message));
    if (level !== 'error' && level !== 'warn') return;
    // Node-RED's log entry of a node's warning or error, which its editor shows in the debug sidebar.
    // An Error stays one: the sidebar shows its name (a function's SyntaxError) as Node-RED's does.
    const msg = types.isNativeError(message) ? message : text;
    const entry: NodeLogEntry = { level: level === 'error' ? 20 : 30, id: this.id, type: this.type, msg, path: this._flow.path };
    if (this._alias) entry._alias = this._alias;
    if (this.z) entry.z = this.z;
    if (this.name) entry.name = this.name;
    services.events.emit('node-log', entry);
  }
}

/** A node's warning (level 30) or error (20), as Node-RED's log handlers receive it. */
export interface NodeLogEntry {
  level: 20 | 30;
  id: string;
  type: string;
  /** The text logged, or the Error it came from. */
  msg: string | Error;
  path: string;
  _alias?: string;
  z?: string;
  name?: string;
  [key: string]: unknown;
}

/** The log line's text: as Node-RED's console log writes it, an Error keeps its name (`Error: failed`). */
function logLineText(message: unknown): string {
  return types.isNativeError(message) ? String(message) : logText(message);
}

function logText(message: unknown): string {
  // isNativeError also recognises errors thrown in another realm (function-node sandboxes).
  return types.isNativeError(message) ? message.message || String(message) : typeof message === 'string' ? message : safeString(message);
}

const noDone: DoneFn = () => {};

/** Node-RED's `_complete`: every call completes (or fails) the message. */
function complete(node: Node, msg: Msg, err: unknown): void {
  const hooks = node._flow.services.hooks;
  if (hooks.active.onComplete && hooks.follows(msg)) hooks.trigger('onComplete', { msg, error: err, node: { id: node.id, node } }, () => {});
  if (err) node.error(err, msg);
  else node._flow.handleComplete(node, msg);
}

function makeLoneDone(node: Node, msg: Msg): DoneFn {
  return (err?: unknown) => complete(node, msg, err);
}

function makeDone(node: Node, msg: Msg): DoneFn {
  let pending = node._expectedDoneCount;
  return (err?: unknown) => {
    if (err) complete(node, msg, err);
    else if (--pending === 0) complete(node, msg, undefined);
  };
}

function runCloseHandler(node: Node, handler: CloseHandler, removed: boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    // Node-RED drops a close handler's failure silently; it is kept here, at debug level, for whoever looks.
    const done = (err?: unknown) => {
      if (err) node._log('debug', err);
      resolve();
    };
    try {
      // Node-RED passes `removed` only to handlers declaring exactly two parameters.
      if (handler.length === 2) (handler as (r: boolean, d: () => void) => unknown).call(node, removed, done);
      else if (handler.length >= 1) (handler as (d: () => void) => unknown).call(node, done);
      else {
        const result = (handler as () => unknown).call(node);
        if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(() => resolve(), done);
        else resolve();
      }
    } catch (err) {
      done(err);
    }
  });
}

/** Node-RED's updateWires bookkeeping: `_wireCount` and the single-wire `_wire`. */
function setWires(node: Node, wires: string[][]): void {
  node.wires = wires;
  let count = 0;
  for (const w of wires) count += w.length;
  node._wireCount = count;
  if (count === 1 && wires.length === 1) node._wire = wires[0][0];
  else if (node._wire !== undefined) delete node._wire;
}

/** Deployed configs are validated already, so the common case returns the array as it is. */
function normaliseWires(wires: unknown): string[][] {
  if (!Array.isArray(wires)) return [];
  if (wires.every((w) => Array.isArray(w) && w.every((id) => typeof id === 'string'))) return wires as string[][];
  return wires.map((w) => (Array.isArray(w) ? w.filter((id): id is string => typeof id === 'string') : []));
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  } catch {
    return String(value);
  }
}

/**
 * Node-RED's Node constructor, as a function so `RED.nodes.createNode(this, config)` can run it on
 * objects built by contributed constructors.
 */
export function initNode(node: Node, config: NodeConfig): void {
  const flow = config[FLOW] ?? constructing;
  if (!flow) throw new Error(`node ${config.id} (${config.type}) was not created by the runtime`);
  if (!(node as unknown as { _events?: unknown })._events) EventEmitter.call(node);
  node.id = config.id;
  node.type = config.type;
  // Set even when absent, as Node-RED does: modules test `'g' in node` or copy the node's own keys.
  node.z = config.z;
  node.g = config.g;
  // Truthy only, as in Node-RED: an exported `name: ""` leaves the node without a name.
  if (config.name) node.name = config.name;
  if (config._alias) node._alias = config._alias;
  setWires(node, normaliseWires(config.wires));
  // Only _flow is hidden, as in Node-RED; the bookkeeping fields are plain properties (fast to create).
  Object.defineProperty(node, '_flow', { value: flow, writable: true, enumerable: false, configurable: true });
  node._inputHandlers = [];
  node._closeCallbacks = [];
  node._expectedDoneCount = 0;
  node._closed = false;
  node._send = (msg: Parameters<SendFn>[0]) => node.send(msg);
  node._stats = flow.services.stats.forType(config.type);
  // Nodes inside subflow instances keep their credentials under the template node id, as in Node-RED.
  const g = config.g;
  const credentials = flow.services.credentialsFor(config._alias ?? config.id, config.type, (name) => flow.settingFor(g, name));
  if (credentials !== undefined) node.credentials = credentials;
}
