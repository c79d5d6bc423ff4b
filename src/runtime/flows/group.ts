import type { FlowNodeConfig } from '../../storage/contract.js';
import { EnvScope, UNSET } from './env/scope.js';
import type { EnvContext } from './env/env.js';

/** Whatever encloses a group: another group or the flow. */
export interface SettingSource {
  getSetting(name: string): unknown;
}

/**
 * A group's environment (Node-RED 3.1+): `NR_GROUP_NAME`, `NR_GROUP_ID` and the group's own env
 * list, then whatever encloses it. Nodes with a `g` read their env through their group.
 */
export class GroupScope implements SettingSource {
  readonly env: EnvScope;
  /** This group's id, then its enclosing groups' ids outwards (cycles already cut). */
  readonly chain: string[];

  constructor(
    readonly config: FlowNodeConfig,
    private readonly parent: SettingSource,
    context: (outside: (name: string) => unknown) => EnvContext,
  ) {
    this.env = new EnvScope(config.env, () => context((name) => this.parent.getSetting(name)));
    this.chain = [config.id, ...(parent instanceof GroupScope ? parent.chain : [])];
  }

  getSetting(name: string): unknown {
    if (name === 'NR_GROUP_NAME') return this.config.name;
    if (name === 'NR_GROUP_ID') return this.config.id;
    const value = this.env.lookup(name);
    return value === UNSET ? this.parent.getSetting(name) : value;
  }
}

/**
 * Scopes for the groups of one container, nested groups inside their parents. Returned in
 * outermost-first order, the order their env must be evaluated in.
 */
export function buildGroupScopes(
  configs: Map<string, FlowNodeConfig>,
  flow: SettingSource,
  context: (id: string, outside: (name: string) => unknown) => EnvContext,
): Map<string, GroupScope> {
  const scopes = new Map<string, GroupScope>();
  // Groups being built: a group naming one of them as its parent is a cycle, cut at the flow.
  const visiting = new Set<string>();
  const build = (conf: FlowNodeConfig): GroupScope => {
    const existing = scopes.get(conf.id);
    if (existing) return existing;
    visiting.add(conf.id);
    const outer = typeof conf.g === 'string' && !visiting.has(conf.g) ? configs.get(conf.g) : undefined;
    const parent = outer ? build(outer) : flow;
    const scope = new GroupScope(conf, parent, (outside) => context(conf.id, outside));
    scopes.set(conf.id, scope);
    visiting.delete(conf.id);
    return scope;
  };
  for (const conf of configs.values()) build(conf);
  return scopes;
}
