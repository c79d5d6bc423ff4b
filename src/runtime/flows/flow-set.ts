import type { RuntimeServices } from './services.js';
import { Flow, problemReport } from './flow.js';
import { isActive, type ContainerInfo, type ParsedConfig } from '../config/config.js';
import type { FlowNodeConfig } from '../../storage/contract.js';
import type { NodeErrorReport } from '../config/deploy-types.js';
import type { LiveNode } from './services.js';
import { startSubflowInstance } from './subflow/subflow.js';
import { GlobalEnv } from './env/global-env.js';
import { isPrimaryOnly } from '../config/primary-only.js';

const GLOBAL = 'global';
const SUBFLOW_TYPE = /^subflow:(.+)$/;

/**
 * The running side of the active configuration: one Flow per tab plus the global flow. `apply`
 * moves it from one parsed configuration to the next, stopping exactly the given nodes, hot-swapping
 * wires of the rewired ones and starting every active node that is not running.
 */
export class FlowSet {
  private readonly services: RuntimeServices;
  readonly flows = new Map<string, Flow>();
  readonly global: Flow;
  /** Nodes whose constructor failed at the last start, by id. */
  readonly errors = new Map<string, NodeErrorReport>();
  /** Tabs not started because they use a type nobody provides. */
  readonly waiting = new Set<string>();
  /** Tabs stopped for flooding the delivery queue; they stay stopped until a deploy touches them. */
  private readonly halted = new Set<string>();
  /** Primary-only tabs are fenced (fencePrimaryOnly): a tab a deploy starts meanwhile is fenced too. */
  private primaryOnlyFenced = false;
  private missing: string[] = [];
  /** Where each live node runs, to stop it without a search. */
  private readonly home = new Map<string, Flow>();
  /** Live config nodes (no x/y): they close after the nodes using them, unless messages pass through them. */
  private readonly configIds = new Set<string>();
  /** The configuration last started: who uses which config node. */
  private current: ParsedConfig | undefined;
  /** Ids of live subflow instances, nested ones included. */
  private readonly liveInstances = new Set<string>();

  /** The global-config node's env: what every flow's env lookups fall back to before process.env. */
  readonly globalEnv: GlobalEnv;

  constructor(services: RuntimeServices) {
    this.services = services;
    this.global = new Flow(services, GLOBAL, undefined);
    this.global.usersOf = (id) => {
      const users: LiveNode[] = [];
      for (const user of this.current?.users.get(id) ?? []) {
        const node = services.nodes.get(user);
        if (node) users.push(node);
      }
      return users;
    };
    this.globalEnv = new GlobalEnv(services);
  }

  get missingTypes(): string[] {
    return this.missing;
  }

  /** Returns the ids that were stopped and those (re)started; `onStopped` runs between stopping and starting. */
  async apply(next: ParsedConfig, stop: Set<string> | 'all', rewired: Iterable<string> = [], onStopped?: () => void): Promise<{ stopped: string[]; started: string[] }> {
    const stopped = stop === 'all' ? [...this.home.keys()] : [...stop].filter((id) => this.home.has(id));
    rewired = [...rewired];
    this.releaseHalted(next, stop, rewired);
    await this.stop(stopped, next);
    onStopped?.();
    for (const [id, flow] of this.flows) {
      const tab = next.tabs.get(id);
      if (!tab || tab.disabled) this.flows.delete(id);
      else if (flow.config !== tab.config) flow.setConfig(tab.config);
    }
    for (const id of rewired) {
      const node = this.services.nodes.get(id);
      const conf = next.all.get(id);
      if (node && conf) node.updateWires(conf.wires as string[][]);
    }
    const started = await this.start(next);
    // Nested instances have derived ids the configuration does not list; their flow context stays.
    const active = new Set(next.all.keys());
    for (const id of this.liveInstances) active.add(id);
    // Not awaited: the deploy answers once memory is clean; removed nodes' context files are deleted
    // in the background (clean logs its own errors and close waits for the stores).
    void this.services.context.clean(active);
    return { stopped, started };
  }

  /**
   * What `apply(next, stop)` would stop and try to start, changing nothing: the same walk as
   * `start` over the nodes left running (a constructor that throws is only known by running it).
   */
  preview(next: ParsedConfig, stop: Set<string> | 'all'): { stop: string[]; start: string[]; running: number } {
    const stopping = stop === 'all' ? [...this.home.keys()] : [...stop].filter((id) => this.home.has(id));
    const running = new Set(this.home.keys());
    for (const id of stopping) running.delete(id);
    const missing = new Set(this.findMissing(next));
    const blockedConfigs = new Set<string>();
    for (const [id, conf] of next.globalConfigs) if (missing.has(conf.type)) blockedConfigs.add(id);
    const start: string[] = [];
    const consider = (id: string, conf: FlowNodeConfig, configNode: boolean) => {
      if (conf.d === true || running.has(id) || (configNode && missing.has(conf.type))) return;
      start.push(id);
    };
    for (const [id, conf] of next.globalConfigs) consider(id, conf, true);
    for (const tab of next.tabs.values()) {
      if (tab.disabled || this.usesMissing(tab, next, missing, blockedConfigs)) continue;
      for (const [id, conf] of tab.configs) consider(id, conf, true);
      for (const [id, conf] of tab.nodes) consider(id, conf, false);
      for (const [id, conf] of tab.subflowInstances) consider(id, conf, false);
    }
    return { stop: stopping, start, running: running.size };
  }

  async stopAll(): Promise<void> {
    await this.stop([...this.home.keys()], undefined);
    this.flows.clear();
    this.releaseHalted(undefined, 'all');
  }

  /**
   * Stops one tab's nodes because it floods the delivery queue, keeping its configuration: the
   * error stays in the flows state until a deploy that touches the tab (or a full one) starts it.
   * The queue drops the tab's messages from now on, so the flood ends before the nodes close.
   */
  halt(tab: string, error: string): boolean {
    const flow = this.flows.get(tab);
    if (!flow || this.halted.has(tab)) return false;
    this.halted.add(tab);
    this.services.queue.block(tab);
    this.errors.set(tab, { id: tab, type: 'tab', error });
    return true;
  }

  /**
   * Drops every message to the nodes of the primary-only tabs from now on, at once, until
   * `unfencePrimaryOnly`: what a primary that can no longer prove its lease does before its
   * primary-only tabs are stopped. A deploy under way that starts a primary-only tab (one it
   * planned while this instance was the primary) starts it fenced.
   */
  fencePrimaryOnly(): void {
    this.primaryOnlyFenced = true;
    for (const tab of this.primaryOnlyTabs()) this.services.queue.block(tab);
  }

  unfencePrimaryOnly(): void {
    this.primaryOnlyFenced = false;
    for (const tab of this.primaryOnlyTabs()) if (!this.halted.has(tab)) this.services.queue.unblock(tab);
  }

  private primaryOnlyTabs(): string[] {
    return [...(this.current?.tabs ?? [])].filter(([, tab]) => isPrimaryOnly(tab.config)).map(([id]) => id);
  }

  /** Closes the nodes of a halted tab; nothing if a deploy restarted the tab meanwhile. */
  async stopHalted(tab: string): Promise<void> {
    const flow = this.flows.get(tab);
    if (!flow || !this.halted.has(tab)) return;
    await this.stop([...this.home].filter(([, home]) => home === flow).map(([id]) => id), undefined);
  }

  /** Lets halted tabs run again when the deploy replaces them (all, or any of their nodes). */
  private releaseHalted(next: ParsedConfig | undefined, stop: Set<string> | 'all', rewired: Iterable<string> = []): void {
    if (this.halted.size === 0) return;
    const ids = stop === 'all' ? [] : [...stop, ...rewired];
    for (const tab of this.halted) {
      const touched = stop === 'all' || next === undefined || !next.tabs.has(tab) || ids.some((id) => id === tab || next.all.get(id)?.z === tab);
      if (!touched) continue;
      this.halted.delete(tab);
      this.errors.delete(tab);
      this.services.queue.unblock(tab);
    }
  }

  private async stop(ids: string[], next: ParsedConfig | undefined): Promise<void> {
    if (ids.length === 0) return;
    // Shutting down (no next configuration) is not removal: Node-RED closes with removed=false.
    const removed = (id: string) => next !== undefined && (!next.all.has(id) || !isActive(next, id));
    // Regular nodes close before the config nodes they may still be using, and of those, the ones
    // no other closing node sends to (http in, inject, …) first: what they already let in finishes
    // in the nodes after them, which close once they have.
    // Node-RED's rule makes a node without x/y a config node, yet one that sends or is sent
    // messages (a flow written by a script, without positions) is one of them: closing it with the
    // config nodes would close the nodes after an http in beside it, dropping what it let in.
    const fed = new Set<string>();
    const sends = new Set<string>();
    for (const id of ids) {
      const wires = this.current?.all.get(id)?.wires;
      if (!Array.isArray(wires)) continue;
      for (const port of wires) {
        if (!Array.isArray(port) || port.length === 0) continue;
        sends.add(id);
        for (const target of port) fed.add(target);
      }
    }
    const isConfig = (id: string) => this.configIds.has(id) && !fed.has(id) && !sends.has(id);
    const regular = ids.filter((id) => !isConfig(id));
    const configs = ids.filter(isConfig);
    const sources = regular.filter((id) => !fed.has(id));
    const downstream = regular.filter((id) => fed.has(id));
    for (const batch of [sources, downstream, configs]) {
      await Promise.all(
        batch.map((id) => {
          const flow = this.home.get(id)!;
          this.home.delete(id);
          this.configIds.delete(id);
          this.errors.delete(id);
          return flow.stopNode(id, removed(id));
        }),
      );
    }
  }

  /** Starts every active node of `config` that is not running; tabs using missing types wait. */
  async start(config: ParsedConfig): Promise<string[]> {
    this.current = config;
    const started: string[] = [];
    const preparing = this.globalEnv.update(config);
    if (preparing) await preparing;
    this.missing = this.findMissing(config);
    const missing = new Set(this.missing);
    this.forgetStaleErrors();
    this.waiting.clear();
    const blockedConfigs = new Set<string>();
    for (const [id, conf] of config.globalConfigs) if (missing.has(conf.type)) blockedConfigs.add(id);

    this.startConfigNodes(this.global, config.globalConfigs, config, missing, started);
    for (const [tabId, tab] of config.tabs) {
      if (tab.disabled || this.halted.has(tabId)) continue;
      if (this.usesMissing(tab, config, missing, blockedConfigs)) {
        this.waiting.add(tabId);
        continue;
      }
      if (this.primaryOnlyFenced && isPrimaryOnly(tab.config)) this.services.queue.block(tabId);
      let flow = this.flows.get(tabId);
      if (!flow) {
        flow = new Flow(this.services, tabId, tab.config);
        this.flows.set(tabId, flow);
      } else if (this.globalEnv.changed) {
        flow.resetEnv();
      }
      flow.setGroups(tab.groups);
      const flowEnv = flow.prepareEnv();
      if (flowEnv) await flowEnv;
      this.startConfigNodes(flow, tab.configs, config, missing, started);
      for (const [id, conf] of tab.nodes) {
        if (conf.d === true || this.home.has(id)) continue;
        if (this.services.registry.getSubflowDefinition(conf.type)) await this.createInstance(flow, conf, config, started);
        else this.create(flow, conf, started);
      }
      for (const [id, conf] of tab.subflowInstances) {
        if (conf.d === true || this.home.has(id)) continue;
        await this.createInstance(flow, conf, config, started);
      }
    }
    if (this.waiting.size) {
      this.services.log.warn({ missingTypes: this.missing }, `Waiting for missing types to be registered: ${this.missing.join(', ')}`);
    }
    return started;
  }

  /**
   * The errors describe the running configuration only: a node that failed is not live, so every
   * start either builds it again (and records a new error) or it is gone. Internal nodes of a live
   * subflow instance keep theirs until the instance stops.
   */
  private forgetStaleErrors(): void {
    for (const [id, report] of this.errors) {
      if (this.home.has(id) || this.halted.has(id) || (report.z !== undefined && this.liveInstances.has(report.z))) continue;
      this.errors.delete(id);
    }
  }

  private create(flow: Flow, conf: FlowNodeConfig, started: string[]): void {
    const problem = flow.createNode(conf);
    if (problem === undefined || problem.live) {
      this.home.set(conf.id, flow);
      if (!('x' in conf && 'y' in conf)) this.configIds.add(conf.id);
      started.push(conf.id);
    }
    if (problem === undefined) return;
    // A live node's error is in the log already: it reported it itself.
    this.errors.set(conf.id, problemReport(conf, problem.error));
    if (!problem.live) this.services.log.error({ node: { id: conf.id, type: conf.type, z: conf.z } }, `Failed to start node: ${problem.error}`);
  }

  private async createInstance(flow: Flow, conf: FlowNodeConfig, config: ParsedConfig, started: string[]): Promise<void> {
    let error: string | undefined;
    try {
      error = await startSubflowInstance(flow, conf, { config, errors: this.errors, live: this.liveInstances });
    } catch (err) {
      // A template or module the parser could not lay out fails this instance only.
      error = err instanceof Error ? err.message : String(err);
    }
    if (error === undefined) {
      this.home.set(conf.id, flow);
      started.push(conf.id);
      return;
    }
    this.errors.set(conf.id, problemReport(conf, error));
    this.services.log.error({ node: { id: conf.id, type: conf.type, z: conf.z } }, `Failed to start node: ${error}`);
  }

  /** Config nodes in dependency order, so a config node can getNode() the ones it references. */
  private startConfigNodes(flow: Flow, configs: Map<string, FlowNodeConfig>, all: ParsedConfig, missing: Set<string>, started: string[]): void {
    const visiting = new Set<string>();
    const visit = (id: string, conf: FlowNodeConfig) => {
      if (this.home.has(id) || visiting.has(id) || conf.d === true || missing.has(conf.type)) return;
      visiting.add(id);
      for (const [key, value] of Object.entries(conf)) {
        if (key === 'id' || key === 'z' || typeof value !== 'string' || value === id) continue;
        const dep = configs.get(value) ?? all.globalConfigs.get(value);
        if (dep) visit(value, dep);
      }
      const target = all.globalConfigs.has(id) ? this.global : flow;
      if (!this.home.has(id)) this.create(target, conf, started);
    };
    for (const [id, conf] of configs) visit(id, conf);
  }

  private usesMissing(tab: ContainerInfo, config: ParsedConfig, missing: Set<string>, blockedConfigs: Set<string>): boolean {
    if (missing.size === 0) return false;
    for (const group of [tab.nodes, tab.configs, tab.subflowInstances]) {
      for (const conf of group.values()) {
        if (conf.d === true) continue;
        if (missing.has(conf.type)) return true;
        const sub = SUBFLOW_TYPE.exec(conf.type);
        if (sub && this.subflowUsesMissing(sub[1], config, missing, new Set())) return true;
        if (blockedConfigs.size) {
          for (const value of Object.values(conf)) if (typeof value === 'string' && blockedConfigs.has(value)) return true;
        }
      }
    }
    return false;
  }

  private subflowUsesMissing(id: string, config: ParsedConfig, missing: Set<string>, seen: Set<string>): boolean {
    const sf = config.subflows.get(id);
    if (!sf || seen.has(id)) return !sf;
    seen.add(id);
    for (const group of [sf.nodes, sf.configs, sf.subflowInstances]) {
      for (const conf of group.values()) {
        if (missing.has(conf.type)) return true;
        const sub = SUBFLOW_TYPE.exec(conf.type);
        if (sub && this.subflowUsesMissing(sub[1], config, missing, seen)) return true;
      }
    }
    return false;
  }

  private findMissing(config: ParsedConfig): string[] {
    const missing = new Set<string>();
    for (const conf of config.all.values()) {
      const type = conf.type;
      if (type === 'tab' || type === 'subflow' || type === 'group' || missing.has(type)) continue;
      const sub = SUBFLOW_TYPE.exec(type);
      if (sub ? !config.subflows.has(sub[1]) : !this.services.registry.isKnownType(type)) missing.add(type);
    }
    return [...missing];
  }
}
