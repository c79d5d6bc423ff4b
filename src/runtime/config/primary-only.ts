import type { FlowNodeConfig } from '../../storage/contract.js';

/**
 * Primary-only tabs: a tab whose env sets `RUNNEL_PRIMARY_ONLY` to `true` runs on the cluster's
 * primary alone (schedulers must fire once, not once per instance). Elsewhere the tab is run as
 * if it were disabled; the stored configuration is never changed.
 */

const PRIMARY_ONLY_ENV = 'RUNNEL_PRIMARY_ONLY';

export function isPrimaryOnly(node: FlowNodeConfig): boolean {
  if (node.type !== 'tab' || !Array.isArray(node.env)) return false;
  return node.env.some((e: unknown) => {
    const entry = e as { name?: unknown; value?: unknown };
    return entry?.name === PRIMARY_ONLY_ENV && String(entry.value).trim() === 'true';
  });
}

/** The configuration this instance runs: the primary-only tabs disabled unless it is the primary. */
export function primaryView(flows: FlowNodeConfig[], primary: boolean): FlowNodeConfig[] {
  if (primary || !flows.some(isPrimaryOnly)) return flows;
  return flows.map((n) => (isPrimaryOnly(n) ? { ...n, disabled: true } : n));
}

/** The primary-only tabs and every node on them: what starts or stops when the role changes. */
export function primaryOnlyIds(flows: FlowNodeConfig[]): Set<string> {
  const tabs = new Set(flows.filter(isPrimaryOnly).map((t) => t.id));
  const ids = new Set(tabs);
  for (const n of flows) if (n.z !== undefined && tabs.has(n.z)) ids.add(n.id);
  return ids;
}

/**
 * Whether a context scope (`flowId`, or `nodeId:flowId`) or a node id belongs to a primary-only tab
 * of the configuration `flows()` returns now: the tab's own flow context, and the context of its
 * nodes and of the subflow instances on it. The ids are worked out once per configuration; a plain
 * id is looked up without splitting, since node statuses ask with every message some nodes handle.
 */
export function primaryOnlyScopes(flows: () => FlowNodeConfig[]): (scope: string) => boolean {
  let seen: FlowNodeConfig[] | undefined;
  let ids = new Set<string>();
  return (scope) => {
    const current = flows();
    if (current !== seen) {
      seen = current;
      ids = primaryOnlyIds(current);
    }
    return scope.includes(':') ? scope.split(':').some((id) => ids.has(id)) : ids.has(scope);
  };
}
