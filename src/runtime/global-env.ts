import type { FlowNodeConfig } from '../storage/types.js';
import type { ParsedConfig } from './config.js';
import type { Engine } from './engine.js';
import { EnvScope, UNSET } from './env-scope.js';

const GLOBAL_CONFIG = 'global-config';

/**
 * The runtime-wide env of Node-RED 3.1+: the `env` list of the configuration's `global-config`
 * node (the editor's "Global Environment Variables"), with `cred` values from that node's
 * credentials `map`. Every flow falls back to it, and it falls back to process.env.
 */
export class GlobalEnv {
  private node: FlowNodeConfig | undefined;
  private scope: EnvScope | undefined;
  /** Whether the last `update` took a different global-config node: flows must forget their env. */
  changed = false;
  private readonly excluded: Set<string>;

  constructor(private readonly engine: Engine) {
    this.excluded = new Set(engine.settings.envVarExcludes);
  }

  /** Takes the global-config node of `config`; a promise when its env needs asynchronous work. */
  update(config: ParsedConfig): Promise<void> | undefined {
    let node: FlowNodeConfig | undefined;
    for (const conf of config.globalConfigs.values()) if (conf.type === GLOBAL_CONFIG && conf.d !== true) node = conf;
    this.changed = node !== this.node;
    if (!this.changed) return undefined;
    this.node = node;
    this.scope = node ? this.scopeFor(node) : undefined;
    return this.scope?.prepare();
  }

  /** Names in the `envVarExcludes` setting are hidden from flows, global env and process env alike. */
  getSetting(name: string): unknown {
    if (this.excluded.has(name)) return undefined;
    const value = this.scope ? this.scope.lookup(name) : UNSET;
    return value === UNSET ? process.env[name] : value;
  }

  private scopeFor(node: FlowNodeConfig): EnvScope {
    const engine = this.engine;
    const outside = (name: string) => (this.excluded.has(name) ? undefined : process.env[name]);
    return new EnvScope(node.env, () => {
      const map = engine.credentialsFor(node.id, GLOBAL_CONFIG, outside)?.map;
      return {
        outside,
        credentials: map !== null && typeof map === 'object' ? (map as Record<string, unknown>) : {},
        jsonataNode: { id: node.id, context: () => engine.context.getNodeContext(node.id, undefined) },
        warn: (text) => engine.log.warn({ node: { id: node.id, type: GLOBAL_CONFIG } }, text),
      };
    });
  }
}
