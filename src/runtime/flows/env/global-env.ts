import type { FlowNodeConfig } from '../../../storage/contract.js';
import type { ParsedConfig } from '../../config/config.js';
import type { RuntimeServices } from '../services.js';
import { processEnv } from '../../util/process-env.js';
import { EnvScope, UNSET } from './scope.js';

const GLOBAL_CONFIG = 'global-config';

/**
 * The runtime-wide env of Node-RED 3.1+: the `env` list of the configuration's `global-config`
 * node (the editor's "Global Environment Variables"), with `cred` values from that node's
 * credentials `map`. Every flow falls back to it, and it falls back to process.env (less Runnel's
 * own secrets, see util/process-env.ts).
 */
export class GlobalEnv {
  /** What the current scope was built from: the node's JSON and its stored credentials. */
  private source: string | undefined;
  private scope: EnvScope | undefined;
  /** Whether the last `update` took a different global-config node: flows must forget their env. */
  changed = false;
  private readonly excluded: Set<string>;

  constructor(private readonly services: RuntimeServices) {
    this.excluded = new Set(services.settings.envVarExcludes);
  }

  /** Takes the global-config node of `config`; a promise when its env needs asynchronous work. */
  update(config: ParsedConfig): Promise<void> | undefined {
    let node: FlowNodeConfig | undefined;
    for (const conf of config.globalConfigs.values()) if (conf.type === GLOBAL_CONFIG && conf.d !== true) node = conf;
    // By content: most deploys carry an unchanged global-config node, and flows keep their env then.
    const source = node && JSON.stringify([config.text?.get(node.id) ?? node, this.services.credentialsFor(node.id, GLOBAL_CONFIG, () => undefined)]);
    this.changed = source !== this.source;
    if (!this.changed) return undefined;
    this.source = source;
    this.scope = node ? this.scopeFor(node) : undefined;
    return this.scope?.prepare();
  }

  /** Names in the `envVarExcludes` setting are hidden from the process env only, as in Node-RED. */
  getSetting(name: string): unknown {
    const value = this.scope ? this.scope.lookup(name) : UNSET;
    if (value !== UNSET) return value;
    return this.excluded.has(name) ? undefined : processEnv(name);
  }

  private scopeFor(node: FlowNodeConfig): EnvScope {
    const services = this.services;
    const outside = (name: string) => (this.excluded.has(name) ? undefined : processEnv(name));
    return new EnvScope(node.env, () => {
      const map = services.credentialsFor(node.id, GLOBAL_CONFIG, outside)?.map;
      return {
        outside,
        credentials: map !== null && typeof map === 'object' ? (map as Record<string, unknown>) : {},
        jsonataNode: { id: node.id, context: () => services.context.getNodeContext(node.id, undefined) },
        warn: (text) => services.log.warn({ node: { id: node.id, type: GLOBAL_CONFIG } }, text),
      };
    });
  }
}
