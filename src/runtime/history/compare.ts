import type { FlowNodeConfig, RevisionMeta } from '../../storage/types.js';
import { deepEqual } from '../diff.js';

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

/**
 * Every node that differs, in a stable order: the newer configuration's order, then the removed
 * nodes in the older one's. `sameText(id)` may say a node's JSON text is unchanged, which spares
 * comparing it (a deploy has both texts at hand; most of 10,000 nodes are unchanged).
 */
export function compareConfigs(from: FlowNodeConfig[], to: FlowNodeConfig[], sameText?: (id: string) => boolean): NodeChange[] {
  const old = byId(from);
  const next = byId(to);
  const out: NodeChange[] = [];
  const where = (n: FlowNodeConfig) => (typeof n.z === 'string' && n.z !== '' ? { z: n.z } : {});
  for (const node of to) {
    const before = old.get(node.id);
    if (before === undefined) {
      out.push({ id: node.id, type: node.type, ...where(node), change: 'added' });
      continue;
    }
    if (sameText?.(node.id)) continue;
    const properties = changedProperties(before, node);
    if (properties.length > 0) out.push({ id: node.id, type: node.type, ...where(node), change: 'changed', properties });
    else if (!deepEqual(before.wires, node.wires)) out.push({ id: node.id, type: node.type, ...where(node), change: 'rewired' });
  }
  for (const node of from) if (!next.has(node.id)) out.push({ id: node.id, type: node.type, ...where(node), change: 'removed' });
  return out;
}

/** Per tab (`global` for nodes outside any), how many nodes a deploy added, changed (rewiring included) and removed. */
export function summarise(from: FlowNodeConfig[], to: FlowNodeConfig[], sameText?: (id: string) => boolean): RevisionMeta['summary'] {
  const summary: RevisionMeta['summary'] = {};
  for (const c of compareConfigs(from, to, sameText)) {
    const tab = c.z ?? (c.type === 'tab' ? c.id : 'global');
    const counts = (summary[tab] ??= { added: 0, changed: 0, removed: 0 });
    if (c.change === 'added') counts.added++;
    else if (c.change === 'removed') counts.removed++;
    else counts.changed++;
  }
  return summary;
}
