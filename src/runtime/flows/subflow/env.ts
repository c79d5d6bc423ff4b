import type { EnvEntry } from '../env/env.js';

/** Where a subflow instance's `cred` env values come from. */
export interface SubflowCredentials {
  template: Record<string, unknown>;
  instance: Record<string, unknown>;
}

/**
 * A subflow instance's env list, as Node-RED's Subflow builds it: the template's entries, each
 * replaced in place by the instance entry of the same name, and instance-only entries appended.
 * A `cred` entry takes its value from the instance's credentials when the instance defines it,
 * or the template does not; otherwise from the template's.
 */
export function mergeSubflowEnv(template: unknown, instance: unknown, creds: SubflowCredentials): EnvEntry[] {
  const merged = new Map<string, EnvEntry>();
  const fromTemplate = new Set<string>();
  for (const e of entries(template)) {
    merged.set(e.name, e.type === 'cred' ? { ...e, value: creds.template[e.name] } : e);
    fromTemplate.add(e.name);
  }
  for (const e of entries(instance)) {
    let entry = e;
    if (e.type === 'cred') {
      const useInstance = !fromTemplate.has(e.name) || Object.hasOwn(creds.instance, e.name);
      entry = { ...e, value: useInstance ? creds.instance[e.name] : creds.template[e.name] };
    }
    merged.set(e.name, entry);
  }
  return [...merged.values()];
}

function entries(list: unknown): EnvEntry[] {
  if (!Array.isArray(list)) return [];
  return list.filter((e): e is EnvEntry => e !== null && typeof e === 'object' && typeof (e as EnvEntry).name === 'string');
}
