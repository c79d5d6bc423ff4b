/**
 * The RED API as a declared contract: what a node set's `module.exports = function (RED) {…}`
 * receives, and the node instances it builds. `createRedApi` implements it; the core nodes
 * (src/nodes) are written against it alone, exactly as contributed npm modules are, and import
 * nothing else from the runtime. Member names are Node-RED's because modules use them.
 */
import type { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { CredentialDefinition, NodeConstructor, NodeSetInfo } from '../../registry/registry.js';
import type { Hooks } from './hooks.js';
import type { RouteApp, RouteHandler } from './http-types.js';
import type { NodeSettingDefinition } from './settings-view.js';
import type { RedUtil } from '../util/index.js';
import type { ContextScope, FlowSettings, NodeContext } from '../util/types.js';

export type { CredentialDefinition, NodeConstructor, Hooks, RouteApp, RouteHandler, NodeSettingDefinition, RedUtil, ContextScope, NodeContext };
export type { PreparedJSONata } from '../util/jsonata.js';
export type { UtilNode } from '../util/types.js';

/** A message: any object, read and written by property path. */
export type Msg = Record<string, any>;
/** One message for output 0, an array with one entry per output, or arrays of messages per output. */
export type SendFn = (msg: Msg | Msg[] | (Msg | Msg[] | null | undefined)[] | null | undefined) => void;
/** Completes the message an input handler was given; an argument fails it (catch nodes see it). */
export type DoneFn = (err?: unknown) => void;

export interface NodeStatus {
  fill?: string;
  shape?: string;
  text?: string;
  [key: string]: unknown;
}

/** A node's deployed configuration, as its constructor receives it. */
export interface NodeConfig {
  id: string;
  type: string;
  z?: string;
  g?: string;
  name?: string;
  wires?: string[][];
  /** Inside a subflow instance: the template node's id (credentials and context are kept under it). */
  _alias?: string;
  [key: string]: unknown;
}

/** The node set providing a node's type (Node-RED's hidden `_module`). */
export type NodeModuleInfo = Pick<NodeSetInfo, 'id' | 'name' | 'module' | 'version' | 'types' | 'enabled'>;

/** The flow a node runs in, as far as nodes may look (Node-RED's hidden `_flow`); RED.util reads env through it. */
export interface NodeFlowView extends FlowSettings {
  /** The flow's path: tab id, then subflow instance ids. */
  readonly path: string;
  /** The runtime's message delivery: a node passing a message on without a wire (link nodes) queues it here. */
  readonly services: { readonly queue: { push(target: NodeInstance, msg: Msg): void } };
}

/** A live node: what `RED.nodes.Node` builds and `RED.nodes.createNode` initialises. */
export interface NodeInstance extends EventEmitter {
  id: string;
  type: string;
  z?: string;
  g?: string;
  name?: string;
  _alias?: string;
  wires: string[][];
  credentials?: Record<string, unknown>;
  readonly _flow: NodeFlowView;
  /** Node-RED's `_path` (NR_NODE_PATH): the flow's path, then the node's template id or own id. */
  _path: string;
  readonly _module: NodeModuleInfo | undefined;
  /** Set once the node starts closing: timers firing late check it. */
  _closed: boolean;
  /** `input` handlers get `(msg, send, done)`; `close` handlers `()`, `(done)` or `(removed, done)`. */
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  send(msg: Parameters<SendFn>[0]): void;
  /** Injects a message into this node's own input handlers. */
  receive(msg?: Msg): void;
  /** Runs the input handlers for one message the delivery queue hands over. */
  _deliver(msg: Msg): void;
  updateWires(wires: string[][]): void;
  context(): NodeContext;
  status(status: NodeStatus | string | number | boolean): void;
  /** With a message, catch nodes may handle the error; otherwise (or unhandled) it is logged. */
  error(err: unknown, msg?: Msg): void;
  warn(message: unknown): void;
  log(message: unknown): void;
  debug(message: unknown): void;
  trace(message: unknown): void;
  /** Metrics are not collected: always false, which modules test. */
  metric(): boolean;
  /** Runs the close handlers (bounded by nodeCloseTimeout) and drops the node's context. */
  close(removed?: boolean): Promise<void>;
}

/**
 * Node-RED 5's `RED.nodes.linkcallTargets`: the running `link in` nodes a link call node or a
 * function node's `node.linkcall()` may call, by id or by name (a nameless one by its id).
 */
export interface LinkcallTargets {
  /** Throws unless `node` is a `link in` node. */
  register(node: NodeInstance): void;
  remove(node: NodeInstance): void;
  /**
   * The `link in` node with the id `target`; when `isDynamic`, else the one of that name on the
   * caller's flow, else the only one of that name outside subflows. Throws when there is none, or
   * several of that name.
   */
  getTargetNode(caller: NodeInstance, target: unknown, isDynamic: boolean): NodeInstance;
}

/** `RED.nodes.Node`: the base class core nodes extend. */
export type NodeClass = new (config: NodeConfig) => NodeInstance;

export interface RegisterTypeOptions {
  credentials?: CredentialDefinition;
  /** Node settings exposed on RED.settings (names must start with the type's camel-cased name). */
  settings?: Record<string, NodeSettingDefinition>;
}

/** A log function: an Error logs its message, an object its `msg` with the rest as fields. */
export type LogFn = (msg: unknown) => void;

export interface RedLog {
  fatal: LogFn;
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
  trace: LogFn;
  audit: LogFn;
  metric(): boolean;
  /** `{level, msg}` with a numeric or named level; anything else logs at info. */
  log(entry: unknown): void;
  /** Translates a key of the runtime's own catalog. */
  _: Translate;
  readonly FATAL: 10;
  readonly ERROR: 20;
  readonly WARN: 30;
  readonly INFO: 40;
  readonly DEBUG: 50;
  readonly TRACE: 60;
  readonly AUDIT: 98;
  readonly METRIC: 99;
}

export type Translate = (key: string, subs?: Record<string, unknown>) => string;

/** A plugin as `RED.plugins.registerPlugin` keeps it. */
export type Plugin = Record<string, unknown> & { id: string; type?: unknown; module: string };

/** The RED object one node set receives. Each set gets its own (registerType and `_` are the set's). */
/**
 * Messages to the same config node on the other instances of a cluster: at most once each, in
 * order per sender, up to about 7 kB of JSON (a larger one is not sent: `publish` answers false),
 * lost while the database is unreachable.
 */
export interface ClusterChannel {
  /** Sends `data` to the node with `nodeId` on every other instance. */
  publish(nodeId: string, data: unknown): boolean;
  /** Calls `listener` with what the other instances publish to `nodeId`; returns the unsubscribe function. */
  subscribe(nodeId: string, listener: (data: unknown, origin: string) => void): () => void;
}

export interface RedApi {
  nodes: {
    /** The base class of core nodes; contributed constructors get it through `createNode`. */
    Node: NodeClass;
    /** Node-RED's `RED.nodes.createNode(this, config)`: initialises a node built by a plain constructor. */
    createNode(node: object, config: NodeConfig): void;
    registerType(type: string, ctor: NodeConstructor, opts?: RegisterTypeOptions): void;
    /** Registers a subflow module: a subflow definition shipped as a node type. */
    registerSubflow(definition: unknown): void;
    getNode(id: string): NodeInstance | null;
    /** Calls `cb` with every node of the deployed configuration. */
    eachNode(cb: (config: unknown) => void): void;
    getCredentials(id: string): Record<string, unknown> | undefined;
    addCredentials(id: string, creds: Record<string, unknown>): void;
    deleteCredentials(id: string): void;
    linkcallTargets: LinkcallTargets;
  };
  util: RedUtil;
  /** Node-RED's settings names plus `get`, `set`, `delete` and the node settings types registered. */
  settings: Record<string, unknown>;
  log: RedLog;
  /** Runtime events: flows:started, flows:stopped, node-status, type-registered, runtime-event, comms… */
  events: EventEmitter;
  hooks: Hooks;
  comms: { publish(topic: string, data: unknown, retain?: boolean): void };
  library: { register(type: string): void };
  plugins: {
    registerPlugin(id: string, definition: Record<string, unknown>): void;
    get(id: string): Plugin | undefined;
    getByType(type: string): Plugin[];
  };
  /** The Node-RED version presented to modules. */
  version(): string;
  /** Resolves from the module's own directory first, then from the user directory. */
  require(name: string): unknown;
  /** Imports a package the way function nodes' modules are found (see createRedApi). */
  import(spec: string): Promise<any>;
  readonly httpNode: RouteApp;
  readonly httpAdmin: RouteApp | undefined;
  readonly server: Server | undefined;
  /** Runnel's own: the other instances of a cluster (undefined without shared storage). */
  readonly cluster: ClusterChannel | undefined;
  auth: { needsPermission(permission: string): RouteHandler };
  /** Translates a key of the set's namespace. */
  _: Translate;
}

/** The register functions of a module's node sets, by set name: how the built-in nodes are supplied. */
export interface NodeSets {
  module: string;
  /** The version the module is listed with; Runnel's own by default. */
  version?: string;
  sets: Record<string, (RED: RedApi) => void>;
  /** Node-RED's file of each set (`exec` → `90-exec.js`): the name `nodesExcludes` and `nodesIncludes` give it. */
  files?: Record<string, string>;
}
