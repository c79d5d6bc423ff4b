import type { ModuleInfo, NodeSetInfo, PluginSetInfo } from './registry.js';

/**
 * The node-set object of spec §2.5 plus Node-RED's extra fields clients read: `local` (and `user`)
 * mark sets of installed modules, which the editor's palette manager offers to remove.
 */
export function setInfo(set: NodeSetInfo, mod?: ModuleInfo) {
  const installed = mod !== undefined && !mod.builtin;
  const info: Record<string, unknown> = {
    id: set.id,
    name: set.name,
    types: [...set.types],
    enabled: set.enabled,
    loaded: set.loaded,
    local: installed,
    user: installed,
    module: set.module,
    version: set.version,
  };
  if (set.err) info.err = set.err;
  return info;
}

/** The Node Module object of spec §2.5, with Node-RED's `plugins` (its plugin sets, as GET /plugins lists them). */
export function moduleInfo(mod: ModuleInfo) {
  const info: Record<string, unknown> = { name: mod.name, version: mod.version };
  if (!mod.builtin) {
    info.local = true;
    info.user = true;
    if (mod.path) info.path = mod.path;
  }
  info.nodes = [...mod.sets.values()].map((set) => setInfo(set, mod));
  info.plugins = [...mod.plugins.values()].map(pluginSetInfo);
  return info;
}

/** An entry of GET /plugins (Node-RED's plugin list: the set, its registered plugins, editor/runtime parts). */
export function pluginSetInfo(set: PluginSetInfo) {
  const info: Record<string, unknown> = {
    id: set.id,
    name: set.name,
    enabled: set.enabled,
    local: true,
    user: true,
    module: set.module,
    plugins: set.plugins.map((p) => ({ id: p.id, type: p.type, module: p.module })),
    editor: set.template !== undefined,
    runtime: set.runtime,
    version: set.version,
  };
  if (set.err) info.err = set.err;
  return info;
}
