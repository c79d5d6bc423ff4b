import type { EventEmitter } from 'node:events';
import type { Settings } from '../../settings/settings.js';
import type { Logger } from '../../base/log.js';
import type { Registry } from '../../registry/registry.js';
import type { DeliveryQueue } from './delivery.js';
import type { ContextManager } from '../context/context.js';
import type { Hooks } from '../red-api/hooks.js';
import type { MessageStats, TypeCounters } from './stats.js';
import type { LinkcallTargets, Msg, NodeFlowView, NodeInstance, NodeStatus } from '../red-api/red-api-types.js';

/** The services every live flow and node shares: one per runtime. */
export interface RuntimeServices {
  settings: Settings;
  log: Logger;
  queue: DeliveryQueue;
  context: ContextManager;
  registry: Registry;
  /** Runtime events (Node-RED's RED.events): flows:started, node-status, type-registered, runtime-event… */
  events: EventEmitter;
  /** RED.hooks: message hooks run only while one is registered. */
  hooks: Hooks;
  /** Message counters per node type (metrics). */
  stats: MessageStats;
  /** Every live node by id, across all flows. Delivery resolves wires through it. */
  nodes: Map<string, LiveNode>;
  /** The running link in nodes, for link calls (RED.nodes.linkcallTargets). */
  linkcallTargets: LinkcallTargets;
  /** A deep copy of the node's stored credentials with ${ENV} substituted through `env`; `{}` when its type declares credentials but none are stored. */
  credentialsFor(id: string, type: string, env: (name: string) => unknown): Record<string, unknown> | undefined;
  /** Environment of the runtime root: global-config env, then process.env. */
  getGlobalSetting(name: string): unknown;
  /** Called before a node is built: its constructor is the first code of a flow's to run. */
  beforeNodeCode(): void;
}

/**
 * A node as the runtime's own plumbing (flows, delivery, hooks) handles it. Declared here rather
 * than taken from the Node class so that node, flow and delivery code depend on this file, not on
 * one another.
 */
export interface LiveNode extends NodeInstance {
  readonly _flow: NodeFlow;
  /** The counters of the node's type. */
  _stats: TypeCounters;
  _log(level: 'error' | 'warn' | 'info' | 'debug' | 'trace', message: unknown): void;
}

/** What a node needs of the flow it runs in. */
export interface NodeFlow extends NodeFlowView {
  readonly services: RuntimeServices;
  /** The flow context a node's context() belongs to. */
  readonly contextId: string | undefined;
  /** Env lookup for a node: its group's env when it has one, then the flow's. */
  settingFor(g: string | undefined, name: string): unknown;
  /** Routes an error to the catch nodes in scope; false when none handled it. */
  handleError(node: LiveNode, err: unknown, msg: Msg, reporting?: LiveNode): boolean;
  handleStatus(node: LiveNode, status: NodeStatus, reporting?: LiveNode, mute?: boolean): boolean;
  handleComplete(node: LiveNode, msg: Msg): void;
}
