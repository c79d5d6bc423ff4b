import type { FlowNodeConfig } from '../../storage/contract.js';
import { isReferenceProperty, isRunnable, referenceKey, type ParsedConfig } from './config.js';

/**
 * Node-RED's `diffConfigs` (flows/util.js) and the stop sets of its deployment types, computed in
 * time linear in the size of both configurations: reference propagation runs as a worklist over the
 * reverse indexes `parseConfig` built, instead of rescanning every node until nothing changes.
 */

export interface ConfigDiff {
  added: Set<string>;
  changed: Set<string>;
  removed: Set<string>;
  rewired: Set<string>;
  linked: Set<string>;
  /** Tabs whose env changed, or that were added, removed, disabled or enabled: fully restarted. */
  flowChanged: Set<string>;
  /** A `global-config` node changed: full restart whatever the deployment type. */
  globalConfigChanged: boolean;
}

/** Layout and wiring never make a node "changed"; for a group, neither does its member list or look. */
function ignoredKey(key: string, group: boolean): boolean {
  if (key === 'x' || key === 'y' || key === 'wires') return true;
  return group && (key === 'nodes' || key === 'style' || key === 'w' || key === 'h');
}

/** Node-RED's `compareObjects` for JSON values: structural, with key counts, stopping at the first difference. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let count = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key)) continue;
    count++;
    if (!Object.hasOwn(right, key) || !deepEqual(left[key], right[key])) return false;
  }
  return count === ownKeyCount(right);
}

function ownKeyCount(obj: object): number {
  let count = 0;
  for (const key in obj) if (Object.hasOwn(obj, key)) count++;
  return count;
}

/** Node-RED's `diffNodes`: a material change, layout and wiring aside. */
export function nodesDiffer(before: FlowNodeConfig, after: FlowNodeConfig): boolean {
  if (before === after) return false;
  const groupBefore = before.type === 'group';
  const groupAfter = after.type === 'group';
  let countAfter = 0;
  for (const key in after) {
    if (!Object.hasOwn(after, key) || ignoredKey(key, groupAfter)) continue;
    countAfter++;
    if (!deepEqual(before[key], after[key])) return true;
  }
  let countBefore = 0;
  for (const key in before) if (Object.hasOwn(before, key) && !ignoredKey(key, groupBefore)) countBefore++;
  return countBefore !== countAfter;
}

export function diffConfigs(oldConfig: ParsedConfig, newConfig: ParsedConfig, credentialChanges: Set<string>): ConfigDiff {
  return new Differ(oldConfig, newConfig, credentialChanges).run();
}

class Differ {
  private readonly diff: ConfigDiff = {
    added: new Set(),
    changed: new Set(),
    removed: new Set(),
    rewired: new Set(),
    linked: new Set(),
    flowChanged: new Set(),
    globalConfigChanged: false,
  };
  /** Tabs gone or disabled by this deploy: everything on them is removed. */
  private readonly closedTabs = new Set<string>();
  /** Disabled tabs enabled by this deploy: everything on them is added. */
  private readonly openedTabs = new Set<string>();
  /** Ids marked changed or removed whose referrers are still to be marked. */
  private readonly pending: string[] = [];

  constructor(
    private readonly before: ParsedConfig,
    private readonly after: ParsedConfig,
    private readonly credentialChanges: Set<string>,
  ) {}

  run(): ConfigDiff {
    this.compareTabs();
    this.compareExistingNodes();
    this.findAddedNodes();
    this.propagate();
    this.foldSubflowInternals();
    this.findLinked();
    this.diff.globalConfigChanged = this.touchesGlobalConfig();
    return this.diff;
  }

  private compareTabs(): void {
    const { diff, before, after } = this;
    for (const [id, tab] of before.tabs) {
      const next = after.tabs.get(id);
      if (!next) {
        this.markRemoved(id);
        diff.flowChanged.add(id);
        this.closedTabs.add(id);
      } else if (tab.disabled !== next.disabled) {
        diff.flowChanged.add(id);
        if (tab.disabled) {
          diff.added.add(id);
          this.openedTabs.add(id);
        } else {
          this.markRemoved(id);
          this.closedTabs.add(id);
        }
      } else if (!deepEqual(tab.config.env, next.config.env) || this.credentialChanges.has(id)) {
        // Tab credentials hold the values of its `cred` env entries.
        diff.flowChanged.add(id);
      }
    }
    for (const id of after.tabs.keys()) if (!before.tabs.has(id)) diff.flowChanged.add(id);
  }

  private compareExistingNodes(): void {
    const { diff, after } = this;
    for (const [id, node] of this.before.all) {
      if (node.type === 'tab') continue;
      const next = after.all.get(id);
      const z = typeof node.z === 'string' ? node.z : undefined;
      if (!next || (z !== undefined && this.closedTabs.has(z))) {
        this.markRemoved(id);
        if (z !== undefined && !this.closedTabs.has(z)) this.markContainer(z);
        continue;
      }
      if (z !== undefined && this.openedTabs.has(z)) {
        diff.added.add(id);
        continue;
      }
      const text = this.before.text?.get(id);
      if (text !== undefined && text === after.text?.get(id)) {
        if (this.credentialChanges.has(id)) this.markChanged(id);
        continue;
      }
      if (node.d !== true && next.d === true) this.markRemoved(id);
      if (nodesDiffer(node, next) || this.credentialChanges.has(id)) {
        this.markChanged(id);
      }
      if (!deepEqual(node.wires, next.wires)) {
        diff.rewired.add(id);
        this.markContainerOf(next);
      }
    }
  }

  private findAddedNodes(): void {
    for (const [id, node] of this.after.all) {
      if (this.before.all.has(id)) continue;
      this.diff.added.add(id);
      this.markContainerOf(node);
    }
  }

  private markRemoved(id: string): void {
    if (this.diff.removed.has(id)) return;
    this.diff.removed.add(id);
    this.pending.push(id);
  }

  /** Marks a node of the new configuration changed, with its container and, for a template, its instances. */
  private markChanged(id: string): void {
    if (this.diff.changed.has(id)) return;
    const node = this.after.all.get(id);
    if (!node) return;
    this.diff.changed.add(id);
    this.pending.push(id);
    this.markContainerOf(node);
    if (node.type === 'subflow') for (const instance of this.after.instances.get(id) ?? []) this.markChanged(instance);
  }

  private markContainerOf(node: FlowNodeConfig): void {
    if (typeof node.z === 'string') this.markContainer(node.z);
  }

  private markContainer(z: string): void {
    if (this.after.all.has(z)) this.markChanged(z);
  }

  /**
   * Marks changed every node naming a changed or removed node in a property, to a fixed point.
   * This is how config-node changes reach their users, and group changes reach their members and
   * nested groups (through `g`).
   */
  private propagate(): void {
    this.markAddedReferrersOfVanished();
    const { before, after, pending } = this;
    while (pending.length > 0) {
      const id = pending.pop()!;
      if (after.all.has(id)) {
        for (const ref of after.references.get(id) ?? []) this.markChanged(ref.from);
        continue;
      }
      // A vanished id is not indexed by the new configuration; a node still naming it named it
      // before too (otherwise that property changed and the node is already marked).
      for (const ref of before.references.get(id) ?? []) {
        const node = after.all.get(ref.from);
        if (node && referenceKey(node[ref.prop]) === id) this.markChanged(ref.from);
      }
    }
  }

  /** New nodes naming a vanished id are in neither reverse index; they are few, so scan them. */
  private markAddedReferrersOfVanished(): void {
    const { removed, added } = this.diff;
    if (removed.size === 0) return;
    for (const id of added) {
      const node = this.after.all.get(id);
      if (!node) continue;
      for (const prop of Object.keys(node)) {
        if (!isReferenceProperty(node, prop)) continue;
        const key = referenceKey(node[prop]);
        if (key !== undefined && removed.has(key) && !this.after.all.has(key)) {
          this.markChanged(id);
          break;
        }
      }
    }
  }

  /** Changes inside a template are carried by the template (and so its instances), as in Node-RED. */
  private foldSubflowInternals(): void {
    const { after } = this;
    const inTemplate = (id: string) => {
      const z = after.all.get(id)?.z;
      return typeof z === 'string' && after.subflows.has(z);
    };
    for (const set of [this.diff.changed, this.diff.added, this.diff.rewired]) {
      for (const id of set) if (inTemplate(id)) set.delete(id);
    }
  }

  /** Breadth-first over wires of both graphs, in both directions, from every modified node. */
  private findLinked(): void {
    const { added, changed, removed, rewired, linked } = this.diff;
    const { before, after } = this;
    const visited = new Set<string>();
    const queue: string[] = [];
    for (const set of [added, changed, removed, rewired]) for (const id of set) queue.push(id);
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i];
      if (visited.has(id)) continue;
      visited.add(id);
      const old = before.all.get(id);
      const current = after.all.get(id);
      // Dangling wire targets are not nodes: nothing to restart, nothing to traverse.
      if (!old && !current) continue;
      if (!added.has(id) && !changed.has(id) && !removed.has(id) && !rewired.has(id)) linked.add(id);
      if (old && old.type !== 'tab') pushTargets(old, queue);
      if (current) pushTargets(current, queue);
      for (const source of before.wireSources.get(id) ?? []) queue.push(source);
      for (const source of after.wireSources.get(id) ?? []) queue.push(source);
    }
  }

  private touchesGlobalConfig(): boolean {
    const { added, changed, removed } = this.diff;
    const isGlobalConfig = (id: string) => (this.after.all.get(id) ?? this.before.all.get(id))?.type === 'global-config';
    for (const set of [changed, added, removed]) for (const id of set) if (isGlobalConfig(id)) return true;
    return false;
  }
}

function pushTargets(node: FlowNodeConfig, queue: string[]): void {
  if (!Array.isArray(node.wires)) return;
  for (const port of node.wires) {
    if (!Array.isArray(port)) continue;
    for (const target of port) if (typeof target === 'string') queue.push(target);
  }
}

/**
 * The ids to stop (and later restart) for a deployment type. Only elements the engine runs
 * directly (see `isRunnable`) are returned; the engine stops those it runs and starts those
 * active in the new configuration.
 */
export function stopSet(type: 'full' | 'nodes' | 'flows', diff: ConfigDiff, oldConfig: ParsedConfig, newConfig: ParsedConfig): Set<string> {
  const ids = new Set<string>();
  const add = (id: string) => {
    if (isRunnable(oldConfig, id) || isRunnable(newConfig, id)) ids.add(id);
  };
  if (type === 'full' || diff.globalConfigChanged) {
    for (const id of oldConfig.all.keys()) add(id);
    for (const id of newConfig.all.keys()) add(id);
    return ids;
  }
  const sets = type === 'flows' ? [diff.changed, diff.removed, diff.linked, diff.rewired] : [diff.changed, diff.removed];
  for (const set of sets) for (const id of set) add(id);
  for (const tabId of diff.flowChanged) {
    for (const config of [oldConfig, newConfig]) {
      const tab = config.tabs.get(tabId);
      if (!tab) continue;
      for (const members of [tab.nodes, tab.configs, tab.subflowInstances]) for (const id of members.keys()) add(id);
    }
  }
  return ids;
}
