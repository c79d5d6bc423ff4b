import type { FlowNodeConfig, RevisionMeta } from '../../storage/contract.js';
import { deepEqual } from '../config/diff.js';

/**
 * What changed between two configurations, node by node, for people reading the history (not for
 * deciding restarts: that is diff.ts, with Node-RED's propagation rules). A node is `changed` when
 * a property other than its position and wires differs, `rewired` when only its wires do.
 */

export interface NodeChange {
  id: string;
  type: string;
  /** The tab (or subflow) the node is on in the newer configuration, or the older one if removed. */
  z?: string;
  change: 'added' | 'removed' | 'changed' | 'rewired';
  /** For `changed`: the properties that differ, sorted. */
  properties?: string[];
}

const LAYOUT = new Set(['x', 'y', 'wires']);

function byId(flows: FlowNodeConfig[]): Map<string, FlowNodeConfig> {
  return new Map(flows.map((n) => [n.id, n]));
}

function changedProperties(before: FlowNodeConfig, after: FlowNodeConfig): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => !LAYOUT.has(k) && !deepEqual(before[k], after[k])).sort();
}

/** Each node's compact JSON by id, for both configurations: a deploy has made them for the rev anyway. */
export interface NodeTexts {
  before: ReadonlyMap<string, string>;
  after: ReadonlyMap<string, string>;
}

type Visit = (node: FlowNodeConfig, change: NodeChange['change'], properties?: string[]) => void;

/** Every node that differs, in a stable order: the newer configuration's order, then the removed nodes in the older one's. */
export function compareConfigs(from: FlowNodeConfig[], to: FlowNodeConfig[]): NodeChange[] {
  const out: NodeChange[] = [];
  visitChanges(from, to, (node, change, properties) => {
    const z = zOf(node);
    out.push({ id: node.id, type: node.type, ...(z === undefined ? {} : { z }), change, ...(properties ? { properties } : {}) });
  });
  return out;
}

function zOf(node: FlowNodeConfig): string | undefined {
  return typeof node.z === 'string' && node.z !== '' ? node.z : undefined;
}

function visitNode(before: FlowNodeConfig, node: FlowNodeConfig, visit: Visit): void {
  const properties = changedProperties(before, node);
  if (properties.length > 0) visit(node, 'changed', properties);
  else if (!deepEqual(before.wires, node.wires)) visit(node, 'rewired');
}

/** compareConfigs' walk, handing each change to `visit` (a history summary only counts them). */
function visitChanges(from: FlowNodeConfig[], to: FlowNodeConfig[], visit: Visit): void {
  const old = byId(from);
  for (const node of to) {
    const before = old.get(node.id);
    if (before === undefined) visit(node, 'added');
    else visitNode(before, node, visit);
  }
  if (from.length === 0) return;
  const next = byId(to);
  for (const node of from) if (!next.has(node.id)) visit(node, 'removed');
}

/**
 * The same walk from the texts: presence and sameness are read from the maps the deploy already
 * built instead of indexing both configurations again (two maps of 100,000 nodes per deploy), and
 * the older node is read back from its text only where the texts differ.
 */
function visitByText(from: FlowNodeConfig[], to: FlowNodeConfig[], texts: NodeTexts, visit: Visit): void {
  let kept = 0;
  for (const node of to) {
    const text = texts.before.get(node.id);
    if (text === undefined) {
      visit(node, 'added');
      continue;
    }
    kept++;
    if (text !== texts.after.get(node.id)) visitNode(JSON.parse(text) as FlowNodeConfig, node, visit);
  }
  // With ids unique on both sides, every older node found again means none was removed.
  const unique = texts.before.size === from.length && texts.after.size === to.length;
  if (unique && kept === from.length) return;
  for (const node of from) if (!texts.after.has(node.id)) visit(node, 'removed');
}

/** Per tab (`global` for nodes outside any), how many nodes a deploy added, changed (rewiring included) and removed. */
export function summarise(from: FlowNodeConfig[], to: FlowNodeConfig[], texts?: NodeTexts): RevisionMeta['summary'] {
  const summary: RevisionMeta['summary'] = {};
  const count: Visit = (node, change) => {
    const tab = zOf(node) ?? (node.type === 'tab' ? node.id : 'global');
    const counts = (summary[tab] ??= { added: 0, changed: 0, removed: 0 });
    if (change === 'added') counts.added++;
    else if (change === 'removed') counts.removed++;
    else counts.changed++;
  };
  if (texts) visitByText(from, to, texts, count);
  else visitChanges(from, to, count);
  return summary;
}
