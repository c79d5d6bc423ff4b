import type { LiveNode, NodeFlow, RuntimeServices } from './services.js';
import { Node, constructingIn, type Msg, type NodeConfig, type NodeStatus } from './node.js';
import type { FlowNodeConfig } from '../../storage/contract.js';
import type { NodeErrorReport } from '../config/deploy-types.js';
import { cloneMessage, getSetting, type EnvNode } from '../util/index.js';
import { substituteEnv, type EnvContext } from './env/env.js';
import { EnvScope, UNSET } from './env/scope.js';
import { buildGroupScopes, type GroupScope } from './group.js';

const MAX_ERROR_LOOP = 10;

/** A node that cannot work as configured. */
export interface NodeProblem {
  error: string;
  /** Built and running, having reported `error` while it was built; false: it failed to build. */
  live: boolean;
}

/** What GET /flows/state lists for a node that cannot work as configured, `z` its container. */
export function problemReport(conf: FlowNodeConfig, error: string, z = conf.z): NodeErrorReport {
  const report: NodeErrorReport = { id: conf.id, type: conf.type, z, error };
  if (typeof conf.name === 'string' && conf.name !== '') report.name = conf.name;
  return report;
}

interface ScopedHandler {
  node: LiveNode;
  scope: Set<string> | null;
  /** `scope: "group"`: only nodes in the handler's own group (or groups inside it). */
  groupOnly: boolean;
  uncaught: boolean;
}

/**
 * One running container of nodes: a tab, the global scope (config nodes with no tab), or a subflow
 * instance (see subflow.ts, which extends this class). It owns its live nodes and routes their
 * errors, status and completion events to the catch, status and complete nodes in it.
 */
export class Flow implements NodeFlow {
  readonly services: RuntimeServices;
  readonly id: string;
  /** Id under which this flow's context lives. */
  readonly contextId: string | undefined;
  readonly parent: Flow | undefined;
  config: FlowNodeConfig | undefined;
  readonly nodes = new Map<string, Node>();
  private env: EnvScope | undefined;
  private groupConfigs = new Map<string, FlowNodeConfig>();
  private groups = new Map<string, GroupScope>();
  private catchers: ScopedHandler[] = [];
  private statusWatchers: ScopedHandler[] = [];
  private completers: ScopedHandler[] = [];
  private handlersDirty = true;
  /** Set on the global flow: the live nodes using a config node, which take its errors and status. */
  usersOf: ((configId: string) => LiveNode[]) | undefined;

  constructor(services: RuntimeServices, id: string, config: FlowNodeConfig | undefined, parent?: Flow) {
    this.services = services;
    this.id = id;
    this.contextId = config ? id : undefined;
    this.config = config;
    this.parent = parent;
  }

  get path(): string {
    return this.parent ? `${this.parent.path}/${this.id}` : this.id;
  }

  /** Replaces the container's own configuration (e.g. a changed tab env) and forgets cached env. */
  setConfig(config: FlowNodeConfig | undefined): void {
    this.config = config;
    this.env = undefined;
  }

  /** Forgets evaluated env (the environment around it changed); it is evaluated again on use. */
  resetEnv(): void {
    this.env = undefined;
    this.setGroups(this.groupConfigs);
  }

  /** The container's groups, whose env nodes with a `g` read first. */
  setGroups(configs: Map<string, FlowNodeConfig>): void {
    this.groupConfigs = configs;
    this.groups = buildGroupScopes(configs, this, (id, outside) => this.envContext(id, outside));
  }

  getGroupNode(id: string): GroupScope | undefined {
    return this.groups.get(id);
  }

  /**
   * Evaluates env lists that need asynchronous work (JSONata values): the flow's own, then its
   * groups' outermost first. A promise only when there is such work, so plain flows start
   * synchronously.
   */
  prepareEnv(): Promise<void> | undefined {
    const scopes = [this.ownEnv(), ...[...this.groups.values()].map((g) => g.env)];
    if (!scopes.some((scope) => scope?.needsPreparing)) return undefined;
    return (async () => {
      for (const scope of scopes) await scope?.prepare();
    })();
  }

  /** This container's own env list, or undefined when it has none (the global scope). */
  protected ownEnv(): EnvScope | undefined {
    if (!this.config) return undefined;
    this.env ??= new EnvScope(this.config.env, () => ({
      ...this.envContext(this.id, (n) => this.lookupOutside(n)),
      credentials: this.services.credentialsFor(this.id, this.config?.type ?? 'tab', (n) => this.lookupOutside(n)) ?? {},
    }));
    return this.env;
  }

  /** What evaluating an env list of this container (its own or a group's, `id`) needs. */
  protected envContext(id: string, outside: (name: string) => unknown): EnvContext {
    const services = this.services;
    const contextId = this.contextId;
    return {
      outside,
      jsonataNode: {
        id,
        context: () => services.context.getNodeContext(id, contextId),
      },
      warn: (text) => services.log.warn({ flow: this.id }, text),
    };
  }

  /** Environment lookup: Node-RED's chain of flow env, parent env, global env, process.env. */
  getSetting(name: string): unknown {
    if (this.config) {
      if (name === 'NR_FLOW_NAME') return this.config.label;
      if (name === 'NR_FLOW_ID') return this.config.id;
      const value = this.ownEnv()!.lookup(name);
      if (value !== UNSET) return value;
    }
    return this.lookupOutside(name);
  }

  /** A lookup as a node in group `g` (or none) sees it. */
  settingFor(g: string | undefined, name: string): unknown {
    const group = g === undefined ? undefined : this.groups.get(g);
    return group ? group.getSetting(name) : this.getSetting(name);
  }

  protected lookupOutside(name: string): unknown {
    return this.parent ? this.parent.getSetting(name) : this.services.getGlobalSetting(name);
  }

  getNode(id: string): LiveNode | undefined {
    return this.nodes.get(id) ?? this.services.nodes.get(id);
  }

  /**
   * Builds one node. undefined when it runs; otherwise what is wrong, and whether the node still
   * runs (it reported errors while being built) or failed to build (its constructor threw).
   */
  createNode(config: FlowNodeConfig): NodeProblem | undefined {
    const ctor = this.services.registry.getConstructor(config.type);
    if (!ctor) return { error: `type ${config.type} is not registered`, live: false };
    this.services.beforeNodeCode();
    // Looked up as the node being built sees it (NR_NODE_*, its group, then this flow); built only
    // when a property asks for a variable.
    let self: EnvNode | undefined;
    const lookup = (name: string) => {
      self ??= { id: config.id, name: config.name as string | undefined, g: config.g as string | undefined, _path: `${this.path}/${config._alias ?? config.id}` };
      return getSetting(self, name, this);
    };
    const conf = substituteEnv(config, lookup) as NodeConfig;
    try {
      const { node, errors } = constructingIn(this, config.id, () => new ctor(conf) as Node);
      if (!(node instanceof Node) || node.id !== config.id) {
        return { error: `type ${config.type} did not call RED.nodes.createNode`, live: false };
      }
      this.adopt(node);
      return errors.length ? { error: errors.join('; '), live: true } : undefined;
    } catch (err) {
      return { error: err instanceof Error ? err.message || String(err) : String(err), live: false };
    }
  }

  /** Makes a node built outside `createNode` (a subflow instance) live in this flow. */
  adopt(node: Node): void {
    this.nodes.set(node.id, node);
    this.services.nodes.set(node.id, node);
    this.handlersDirty = true;
  }

  /** Closes one node and forgets it. */
  async stopNode(id: string, removed: boolean): Promise<void> {
    const node = this.nodes.get(id);
    if (!node) return;
    this.nodes.delete(id);
    if (this.services.nodes.get(id) === node) this.services.nodes.delete(id);
    this.handlersDirty = true;
    try {
      await node.close(removed);
    } catch (err) {
      this.services.log.error({ node: { id, type: node.type } }, `Error stopping node: ${String(err)}`);
    }
    if (removed) this.services.events.emit('node-status', { id, status: {} });
  }

  /**
   * Routes an error to this flow's catch nodes. `reporting` is the node whose id scoped catch
   * nodes match: the node itself, or the subflow instance an unhandled error left.
   */
  handleError(node: LiveNode, err: unknown, msg: Msg, reporting: LiveNode = node): boolean {
    this.refreshHandlers();
    const count = (msg.error?.source?.id === node.id ? msg.error.source.count ?? 0 : 0) + 1;
    // Catch nodes see counts 1 to 9, as in Node-RED; the tenth round is where the loop stops.
    if (count >= MAX_ERROR_LOOP) {
      node.warn('Message exceeded maximum number of catches');
      return false;
    }
    let handled = false;
    let uncaughtTaken = false;
    for (const c of this.candidates(this.catchers, reporting)) {
      // Uncaught-only nodes take what no node before them took (Node-RED 4's order).
      if (c.uncaught && !uncaughtTaken) {
        if (handled) continue;
        uncaughtTaken = true;
      }
      const errorMsg = cloneMessage(msg);
      if (errorMsg.error !== undefined) errorMsg._error = errorMsg.error;
      errorMsg.error = describeError(err, node, count);
      c.node.receive(errorMsg);
      handled = true;
    }
    if (!handled && this.usersOf) {
      // A global config node's error belongs to the flows of the nodes using it.
      for (const user of this.usersOf(node.id)) {
        if (user._flow !== this) handled = user._flow.handleError(node, err, msg, user) || handled;
      }
    }
    return handled;
  }

  /**
   * The handlers (catch or status nodes) that take an event `reporting` raised, nearest group
   * first: Node-RED matches scopes, leaves out group-scoped handlers of other groups, and orders
   * by how many groups lie between the reporting node and the handler's group.
   */
  private candidates(handlers: ScopedHandler[], reporting: LiveNode): ScopedHandler[] {
    const id = reporting._alias ?? reporting.id;
    const g = reporting.g;
    if (g === undefined) return handlers.filter((h) => !h.groupOnly && (!h.scope || h.scope.has(id)));
    // The reporting node's groups, innermost first; built once per deploy with cycles cut.
    const chain = this.groups.get(g)?.chain ?? [g];
    const ranked: { h: ScopedHandler; distance: number }[] = [];
    for (const h of handlers) {
      if (h.scope && !h.scope.has(id)) continue;
      const at = h.node.g === undefined ? -1 : chain.indexOf(h.node.g);
      if (at === -1 && h.groupOnly) continue;
      ranked.push({ h, distance: at === -1 ? chain.length : at });
    }
    return ranked.sort((a, b) => a.distance - b.distance).map((r) => r.h);
  }

  /**
   * Publishes a status and routes it to this flow's status nodes; returns whether one took it.
   * `reporting` plays the same part as in `handleError`; `mute` skips the event already published.
   */
  handleStatus(node: LiveNode, status: NodeStatus, reporting: LiveNode = node, mute = false): boolean {
    if (!mute) this.services.events.emit('node-status', { id: node.id, status });
    this.refreshHandlers();
    let handled = false;
    for (const s of this.candidates(this.statusWatchers, reporting)) {
      if (s.node === node) continue;
      s.node.receive({ status: { ...status, source: { id: node.id, type: node.type, name: node.name } } });
      handled = true;
    }
    if (!handled && this.usersOf) {
      for (const user of this.usersOf(node.id)) {
        if (user._flow !== this) handled = user._flow.handleStatus(node, status, user, true) || handled;
      }
    }
    return handled;
  }

  handleComplete(node: LiveNode, msg: Msg): void {
    this.refreshHandlers();
    const id = node._alias ?? node.id;
    for (const c of this.completers) {
      // As Node-RED: each complete node gets its own copy, saying which node completed it.
      if (c.scope && c.scope.has(id)) c.node.receive({ ...cloneMessage(msg), complete: { source: { id: node.id, type: node.type, name: node.name } } });
    }
  }

  private refreshHandlers(): void {
    if (!this.handlersDirty) return;
    this.handlersDirty = false;
    this.catchers = [];
    this.statusWatchers = [];
    this.completers = [];
    for (const node of this.nodes.values()) {
      const conf = node as unknown as { type: string; scope?: unknown; uncaught?: unknown };
      const scope = Array.isArray(conf.scope) ? new Set(conf.scope as string[]) : null;
      const entry = { node, scope, groupOnly: conf.scope === 'group' && node.g !== undefined, uncaught: conf.uncaught === true };
      if (node.type === 'catch') this.catchers.push(entry);
      else if (node.type === 'status') this.statusWatchers.push(entry);
      else if (node.type === 'complete') this.completers.push(entry);
    }
    // Node-RED's order: scoped catch nodes (a list or "group") first, then unscoped ones, with
    // uncaught-only nodes after the others among the unscoped.
    const rank = (h: ScopedHandler) => (h.scope || h.groupOnly ? 0 : h.uncaught ? 2 : 1);
    this.catchers.sort((a, b) => rank(a) - rank(b));
  }
}

function describeError(err: unknown, node: LiveNode, count: number): Record<string, unknown> {
  const error: Record<string, unknown> = {
    message: err instanceof Error ? err.toString() : typeof err === 'string' ? err : String(err),
    source: { id: node.id, type: node.type, name: node.name, count },
  };
  if (err instanceof Error) {
    if ((err as { code?: unknown }).code !== undefined) error.code = (err as { code?: unknown }).code;
    if (err.stack) error.stack = err.stack;
  }
  return error;
}
