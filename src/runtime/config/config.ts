import type { FlowNodeConfig } from '../../storage/contract.js';

/**
 * Indexes a flow configuration the way Node-RED's `parseConfig` (flows/util.js) does: which
 * element is a tab, a subflow template, a group, a flow node or a config node, which types are
 * missing, and who uses each config node. It also builds the reverse indexes `diffConfigs` needs so
 * that a diff is linear in the size of the configuration. Elements are kept by reference, not
 * cloned: a parsed configuration must be treated as immutable.
 */

/** A tab or a subflow template. */
export interface ContainerInfo {
  id: string;
  kind: 'tab' | 'subflow';
  config: FlowNodeConfig;
  /** `tab.disabled === true`; always false for a subflow template. */
  disabled: boolean;
  /** Flow nodes (they have both `x` and `y`), subflow instances excepted. */
  nodes: Map<string, FlowNodeConfig>;
  /** Config nodes scoped to this container (no `x`/`y`, `z` = this id). */
  configs: Map<string, FlowNodeConfig>;
  /** Flow nodes of type `subflow:<id>`. */
  subflowInstances: Map<string, FlowNodeConfig>;
  groups: Map<string, FlowNodeConfig>;
}

/** One property of `from` whose value names another element's id. */
export interface Reference {
  from: string;
  prop: string;
}

export interface ParsedConfig {
  /** Every element by id (the last one wins when ids repeat, as in Node-RED). */
  all: Map<string, FlowNodeConfig>;
  /** Tabs, in configuration order. */
  tabs: Map<string, ContainerInfo>;
  /** Subflow templates (type `subflow`); their internal nodes have `z` = the template id. */
  subflows: Map<string, ContainerInfo>;
  /** Config nodes with no container (no `z`, or a `z` that is neither a tab nor a subflow). */
  globalConfigs: Map<string, FlowNodeConfig>;
  /** Config node id -> ids of the nodes that reference it in a property (not id/z/wires/type). */
  users: Map<string, string[]>;
  /** Unknown types, and `subflow:X` with no template X, in first-seen order. */
  missingTypes: string[];
  /** Flow nodes whose `z` is not an existing tab or subflow: they are reported, never run. */
  orphans: string[];
  /** Referenced id -> the properties naming it (every property but id, z, wires and a group's nodes). */
  references: Map<string, Reference[]>;
  /**
   * Each node's compact JSON, when the deploy that produced this config serialised it anyway: two
   * nodes with the same text cannot differ, so the diff skips the deep compare for them.
   */
  text?: Map<string, string>;
  /** Wire target id -> ids of the nodes wired to it. */
  wireSources: Map<string, string[]>;
  /** Subflow template id -> ids of its instances, wherever they are. */
  instances: Map<string, string[]>;
}

const SUBFLOW_PREFIX = 'subflow:';

/** Node-RED's rule: an element with both `x` and `y` is a flow node, anything else a config node. */
export function isFlowNode(node: FlowNodeConfig): boolean {
  return Object.hasOwn(node, 'x') && Object.hasOwn(node, 'y');
}

/** `subflow:<id>` -> `<id>`, anything else -> undefined. */
export function subflowTemplateId(type: string): string | undefined {
  return type.startsWith(SUBFLOW_PREFIX) ? type.slice(SUBFLOW_PREFIX.length) : undefined;
}

function isStructural(type: string): boolean {
  return type === 'tab' || type === 'subflow' || type === 'group';
}

/**
 * The id a property value would name. Node-RED looks values up as object keys, so a number or a
 * one-element array (`links: ["abc"]`, `scope: ["abc"]`) coerces to the id it contains; other
 * values (objects, longer arrays) cannot be a plausible id.
 */
export function referenceKey(value: unknown): string | undefined {
  let v = value;
  while (Array.isArray(v) && v.length === 1) v = v[0];
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

/**
 * Whether a property may name another element (Node-RED: any but id, z and wires). A group's
 * member list is layout, not configuration: a one-member group must not become "changed" with its
 * member and then restart every node of its enclosing groups.
 */
export function isReferenceProperty(node: FlowNodeConfig, prop: string): boolean {
  if (prop === 'id' || prop === 'z' || prop === 'wires') return false;
  return !(prop === 'nodes' && node.type === 'group');
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Id membership that rejects most non-ids (function bodies, templates) by length before hashing
 * them: only ids present in the configuration are indexed, which keeps the index small.
 */
class IdLookup {
  private readonly lengths: Uint8Array;

  constructor(private readonly all: Map<string, FlowNodeConfig>) {
    let longest = 0;
    for (const id of all.keys()) longest = Math.max(longest, id.length);
    this.lengths = new Uint8Array(longest + 1);
    for (const id of all.keys()) this.lengths[id.length] = 1;
  }

  has(value: string): boolean {
    return value.length < this.lengths.length && this.lengths[value.length] === 1 && this.all.has(value);
  }
}

function newContainer(config: FlowNodeConfig, kind: 'tab' | 'subflow'): ContainerInfo {
  return {
    id: config.id,
    kind,
    config,
    disabled: kind === 'tab' && config.disabled === true,
    nodes: new Map(),
    configs: new Map(),
    subflowInstances: new Map(),
    groups: new Map(),
  };
}

export function parseConfig(flows: FlowNodeConfig[], isKnownType: (type: string) => boolean): ParsedConfig {
  const all = new Map<string, FlowNodeConfig>();
  for (const node of flows) all.set(node.id, node);

  const parsed: ParsedConfig = {
    all,
    tabs: new Map(),
    subflows: new Map(),
    globalConfigs: new Map(),
    users: new Map(),
    missingTypes: [],
    orphans: [],
    references: new Map(),
    wireSources: new Map(),
    instances: new Map(),
  };
  for (const node of all.values()) {
    if (node.type === 'tab') parsed.tabs.set(node.id, newContainer(node, 'tab'));
    else if (node.type === 'subflow') parsed.subflows.set(node.id, newContainer(node, 'subflow'));
  }

  const ids = new IdLookup(all);
  const missing = new Set<string>();
  const configIds: string[] = [];
  for (const node of all.values()) {
    indexReferences(node, ids, parsed.references);
    indexWires(node, parsed.wireSources);
    if (node.type === 'tab' || node.type === 'subflow') continue;
    const owner = typeof node.z === 'string' ? (parsed.tabs.get(node.z) ?? parsed.subflows.get(node.z)) : undefined;
    if (node.type === 'group') {
      owner?.groups.set(node.id, node);
      continue;
    }
    const template = subflowTemplateId(node.type);
    if (template !== undefined ? !parsed.subflows.has(template) : !isKnownType(node.type)) missing.add(node.type);
    if (template !== undefined) pushTo(parsed.instances, template, node.id);
    if (isFlowNode(node)) {
      if (!owner) parsed.orphans.push(node.id);
      else if (template !== undefined) owner.subflowInstances.set(node.id, node);
      else owner.nodes.set(node.id, node);
    } else {
      (owner ? owner.configs : parsed.globalConfigs).set(node.id, node);
      configIds.push(node.id);
    }
  }
  parsed.missingTypes = [...missing];
  for (const id of configIds) parsed.users.set(id, usersOf(id, parsed));
  return parsed;
}

function indexReferences(node: FlowNodeConfig, ids: IdLookup, references: Map<string, Reference[]>): void {
  for (const prop in node) {
    if (!Object.hasOwn(node, prop) || !isReferenceProperty(node, prop)) continue;
    const value = node[prop];
    const key = typeof value === 'string' ? value : referenceKey(value);
    if (key !== undefined && ids.has(key)) pushTo(references, key, { from: node.id, prop });
  }
}

function indexWires(node: FlowNodeConfig, wireSources: Map<string, string[]>): void {
  if (!Array.isArray(node.wires)) return;
  for (const port of node.wires) {
    if (!Array.isArray(port)) continue;
    for (const target of port) if (typeof target === 'string') pushTo(wireSources, target, node.id);
  }
}

/** Node-RED's `_users`: every non-structural node naming the config node in a property but `type`. */
function usersOf(configId: string, parsed: ParsedConfig): string[] {
  const users = new Set<string>();
  for (const ref of parsed.references.get(configId) ?? []) {
    if (ref.prop === 'type' || ref.prop === '_users') continue;
    const from = parsed.all.get(ref.from);
    if (from && !isStructural(from.type)) users.add(ref.from);
  }
  return [...users];
}

/** True when the node is run: not `d: true`, and its tab is not disabled. */
export function isActive(config: ParsedConfig, id: string): boolean {
  const node = config.all.get(id);
  if (!node || node.d === true) return false;
  if (node.type === 'tab') return node.disabled !== true;
  const z = node.z;
  const tab = typeof z === 'string' ? config.tabs.get(z) : undefined;
  if (tab) return !tab.disabled;
  if (typeof z === 'string' && config.subflows.has(z)) return true;
  // A flow node outside any container is an orphan and never runs; a config node there is global.
  return !isFlowNode(node) || isStructural(node.type);
}

/**
 * True for elements the engine instantiates directly: flow nodes and subflow instances on a tab,
 * tab-scoped and global config nodes. Tabs, groups, subflow templates, nodes inside a template
 * (they run through their instances) and orphans are not.
 */
export function isRunnable(config: ParsedConfig, id: string): boolean {
  const node = config.all.get(id);
  if (!node || isStructural(node.type)) return false;
  const z = node.z;
  if (typeof z === 'string' && config.subflows.has(z)) return false;
  if (typeof z === 'string' && config.tabs.has(z)) return true;
  return !isFlowNode(node);
}
