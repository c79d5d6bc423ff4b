import type { EventEmitter } from 'node:events';
import type { Settings } from '../settings.js';
import type { Logger } from '../log.js';
import type { DeliveryQueue } from './delivery.js';
import type { ContextManager } from './context.js';
import type { Node } from './node.js';
import type { Registry } from '../registry/registry.js';
import type { Hooks } from './hooks.js';

/** The services every live flow and node shares: one per runtime. */
export interface Engine {
  settings: Settings;
  log: Logger;
  queue: DeliveryQueue;
  context: ContextManager;
  registry: Registry;
  /** Runtime events (Node-RED's RED.events): flows:started, node-status, type-registered, runtime-event… */
  events: EventEmitter;
  /** RED.hooks: message hooks run only while one is registered. */
  hooks: Hooks;
  /** Every live node by id, across all flows. Delivery resolves wires through it. */
  nodes: Map<string, Node>;
  /** A deep copy of the node's stored credentials with ${ENV} substituted through `env`; `{}` when its type declares credentials but none are stored. */
  credentialsFor(id: string, type: string, env: (name: string) => unknown): Record<string, unknown> | undefined;
  /** Environment of the runtime root: global-config env, then process.env. */
  getGlobalSetting(name: string): unknown;
}
