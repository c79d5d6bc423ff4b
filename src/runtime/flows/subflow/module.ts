import type { FlowNodeConfig } from '../../../storage/contract.js';
import type { SubflowDefinition } from '../../../registry/registry.js';
import { parseConfig, type ContainerInfo, type ParsedConfig } from '../../config/config.js';
import type { EnvEntry } from '../env/env.js';

/** A subflow module's definition parsed as a configuration of its own: nested templates live there. */
export interface SubflowModule {
  template: ContainerInfo;
  config: ParsedConfig;
}

const parsed = new WeakMap<SubflowDefinition, SubflowModule>();

/** Parses a definition once; a module upgrade registers a new definition object. */
export function subflowModule(def: SubflowDefinition, isKnownType: (type: string) => boolean): SubflowModule {
  let module = parsed.get(def);
  if (!module) {
    const { flow, ...template } = def;
    const config = parseConfig([template, ...flow] as FlowNodeConfig[], isKnownType);
    module = { template: config.subflows.get(def.id)!, config };
    parsed.set(def, module);
  }
  return module;
}

/**
 * The env list of one instance of a subflow module, as Node-RED builds it: each of the module's
 * env entries takes the instance property of the same name, typed by its JavaScript type (or a
 * `{type, value}` object); `cred` entries come from the instance's credentials. An entry the
 * instance does not set keeps the module's default (Node-RED fails to start such an instance).
 */
export function moduleInstanceEnv(def: SubflowDefinition, conf: FlowNodeConfig): EnvEntry[] {
  const env: EnvEntry[] = [];
  for (const entry of Array.isArray(def.env) ? def.env : []) {
    if (!entry || typeof entry.name !== 'string') continue;
    if (entry.type === 'cred') {
      env.push({ name: entry.name, type: 'cred' });
      continue;
    }
    const value = conf[entry.name];
    switch (typeof value) {
      case 'string':
        env.push({ name: entry.name, type: 'str', value });
        break;
      case 'number':
        env.push({ name: entry.name, type: 'num', value: String(value) });
        break;
      case 'boolean':
        env.push({ name: entry.name, type: 'bool', value: String(value) });
        break;
      case 'object':
        if (value !== null && typeof (value as { type?: unknown }).type === 'string') {
          const typed = value as { type: string; value?: unknown };
          env.push({ name: entry.name, type: typed.type, value: typed.value });
        }
        break;
    }
  }
  return env;
}
