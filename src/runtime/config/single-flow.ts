import { RunnelError } from '../../base/errors.js';
import type { FlowNodeConfig } from '../../storage/contract.js';
import { isFlowNode } from './config.js';
import { generateId } from '../util/id.js';

/**
 * Node-RED's single-flow API (flows/index.js getFlow/addFlow/updateFlow/removeFlow) as pure
 * functions over a configuration: reading one tab (or `global`) in Node-RED's shape, and the
 * configuration that adding, replacing or removing one leads to. Unlike Node-RED, a replaced tab
 * keeps its place in the tab order.
 */

export interface FlowBody {
  id: string;
  label?: unknown;
  disabled?: unknown;
  locked?: unknown;
  info?: unknown;
  env?: unknown;
  nodes?: FlowNodeConfig[];
  configs?: FlowNodeConfig[];
  subflows?: FlowBody[];
  credentials?: unknown;
}

type Raw = Record<string, unknown>;

const invalid = (message: string) => new RunnelError('invalid_flows', message);

/** A node as GET /flow shows it: credentials stripped, link out wires removed. */
function shown(node: FlowNodeConfig): FlowNodeConfig {
  const { credentials: _, ...copy } = structuredClone(node);
  if (copy.type === 'link out') delete copy.wires;
  return copy as FlowNodeConfig;
}

function split(members: FlowNodeConfig[]): { nodes: FlowNodeConfig[]; configs: FlowNodeConfig[] } {
  return { nodes: members.filter(isFlowNode).map(shown), configs: members.filter((n) => !isFlowNode(n)).map(shown) };
}

function containerProps(target: Raw, from: Raw): void {
  if (from.label) target.label = from.label;
  if (from.disabled !== undefined) target.disabled = from.disabled;
  if (Object.hasOwn(from, 'locked')) target.locked = from.locked;
  if (from.info) target.info = from.info;
  if (from.env) target.env = from.env;
}

/** GET /flow/:id; undefined for an id that is not a tab. */
export function getFlow(flows: FlowNodeConfig[], id: string): FlowBody | undefined {
  const tabs = new Set(flows.filter((n) => n.type === 'tab').map((n) => n.id));
  const subflowIds = new Set(flows.filter((n) => n.type === 'subflow').map((n) => n.id));
  const subflowsOn = (owner: string | undefined) =>
    flows
      .filter((n) => n.type === 'subflow' && (owner === undefined ? n.z === undefined || !tabs.has(n.z) : n.z === owner))
      .map((sf) => {
        const { nodes, configs } = split(flows.filter((n) => n.z === sf.id));
        const copy: Raw = { ...shown(sf), nodes };
        if (configs.length) copy.configs = configs;
        return copy as unknown as FlowBody;
      });
  const result: FlowBody = { id };
  if (id === 'global') {
    const globalConfigs = flows.filter((n) => n.type !== 'tab' && n.type !== 'subflow' && !isFlowNode(n) && (n.z === undefined || (!tabs.has(n.z) && !subflowIds.has(n.z))));
    if (globalConfigs.length) result.configs = globalConfigs.map(shown);
    const subflows = subflowsOn(undefined);
    if (subflows.length) result.subflows = subflows;
    return result;
  }
  const tab = flows.find((n) => n.id === id && n.type === 'tab');
  if (tab === undefined) return undefined;
  containerProps(result as unknown as Raw, tab);
  const { nodes, configs } = split(flows.filter((n) => n.z === id && n.type !== 'subflow'));
  result.nodes = nodes;
  if (configs.length) result.configs = configs;
  const subflows = subflowsOn(id);
  if (subflows.length) result.subflows = subflows;
  return result;
}

function nodeList(value: unknown, what: string): FlowNodeConfig[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw invalid(`${what} must be an array of nodes`);
  return value as FlowNodeConfig[];
}

function tabNode(id: string, body: Raw, withCredentials: boolean): FlowNodeConfig {
  const tab: FlowNodeConfig = { type: 'tab', label: body.label, id };
  for (const key of ['info', 'disabled', 'env', ...(withCredentials ? ['credentials'] : [])]) if (Object.hasOwn(body, key)) tab[key] = body[key];
  return tab;
}

/** POST /flow: a new tab with a generated id, its nodes and config nodes moved onto it. */
export function addFlow(flows: FlowNodeConfig[], body: Raw): { id: string; flows: FlowNodeConfig[] } {
  if (!Object.hasOwn(body, 'nodes')) throw invalid('missing nodes property');
  const id = generateId();
  const existing = new Set(flows.map((n) => n.id));
  const added = [tabNode(id, body, false)];
  for (const node of [...nodeList(body.nodes, 'nodes'), ...nodeList(body.configs, 'configs')]) {
    if (node === null || typeof node !== 'object') throw invalid('every node must be an object');
    if (existing.has(node.id)) throw invalid(`duplicate id: ${String(node.id)}`);
    if (node.type === 'tab' || node.type === 'subflow') throw invalid(`invalid node type: ${node.type}`);
    added.push({ ...node, z: id });
  }
  return { id, flows: [...flows, ...added] };
}

/** PUT /flow/:id: the tab and every node on it replaced; `global` replaces the global config nodes and subflows. */
export function updateFlow(flows: FlowNodeConfig[], id: string, body: Raw): FlowNodeConfig[] {
  const tabs = new Set(flows.filter((n) => n.type === 'tab').map((n) => n.id));
  if (id === 'global') {
    const kept = flows.filter((n) => n.type === 'tab' || (n.z !== undefined && tabs.has(n.z)));
    const added = [...nodeList(body.configs, 'configs')];
    for (const sf of nodeList(body.subflows, 'subflows') as unknown as Raw[]) {
      if (sf === null || typeof sf !== 'object') throw invalid('every subflow must be an object');
      const { nodes, configs, ...template } = sf;
      added.push(...nodeList(nodes, 'subflow nodes'), ...nodeList(configs, 'subflow configs'), template as FlowNodeConfig);
    }
    return [...kept, ...added];
  }
  if (!tabs.has(id)) throw new RunnelError('not_found', `No flow (tab) has id ${id}`);
  const members = [...nodeList(body.nodes, 'nodes'), ...nodeList(body.configs, 'configs')].map((n) => {
    if (n === null || typeof n !== 'object') throw invalid('every node must be an object');
    return { ...n, z: id };
  });
  const out: FlowNodeConfig[] = [];
  for (const node of flows) {
    if (node.id === id) out.push(tabNode(id, body, true), ...members);
    else if (node.z !== id) out.push(node);
  }
  return out;
}

/** DELETE /flow/:id: the tab and every node on it removed. */
export function removeFlow(flows: FlowNodeConfig[], id: string): FlowNodeConfig[] {
  if (id === 'global') throw new RunnelError('invalid_request', 'not allowed to remove global');
  if (!flows.some((n) => n.id === id && n.type === 'tab')) throw new RunnelError('not_found', `No flow (tab) has id ${id}`);
  return flows.filter((n) => n.id !== id && n.z !== id);
}
