import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Runtime } from '../runtime.js';
import type { ModuleInfo, NodeSetInfo, PluginDefinition, PluginSetInfo } from '../../registry/registry.js';
import { moduleInfo, pluginSetInfo, setInfo } from '../../registry/info.js';
import { urlForLogs } from '../../registry/download.js';
import { RunnelError } from '../../base/errors.js';
import type { Caller } from './caller.js';

export type { ModuleInfo, NodeSetInfo, PluginSetInfo };
/** A node set, module or plugin set in the shape GET /nodes and GET /plugins answer it. */
export type Info = Record<string, unknown>;

/** The node registry: /nodes, /nodes/:module[/:set], /plugins, and what the editor's resources read. */
export interface NodesApi {
  /** Every node set, in registry order. */
  listSets(): NodeSetInfo[];
  /** Every module, built-in and installed. */
  listModules(): ModuleInfo[];
  /** One module by name (`@scope/name` for scoped ones); undefined when not loaded. */
  getModule(name: string): ModuleInfo | undefined;
  /** One node set of a module; undefined when there is no such set. */
  getSet(module: string, set: string): NodeSetInfo | undefined;
  /** Every plugin set. */
  listPluginSets(): PluginSetInfo[];
  /** GET /nodes (JSON): every node set. */
  getNodeList(): Info[];
  /** GET /nodes/:module/:set (JSON); `not_found` when there is no such set. */
  getNodeInfo(module: string, set: string): Info;
  /** GET /nodes/:module; `not_found` when the module is not loaded. */
  getModuleInfo(name: string): Info;
  /** GET /plugins (JSON): every plugin set. */
  getPluginList(): Info[];
  /** One plugin set of a module; undefined when there is no such set. */
  getPluginSet(module: string, set: string): PluginSetInfo | undefined;
  /** GET /plugins/:module/:set (JSON); `not_found` when there is no such set. */
  getPluginInfo(module: string, set: string): Info;
  /** A plugin as its module registered it (`RED.plugins.registerPlugin`), with `module` and `path`. */
  getPlugin(id: string): PluginDefinition | undefined;
  /** The registered plugins of one `type`. */
  getPluginsByType(type: string): PluginDefinition[];
  /**
   * Installs (or upgrades) a module by name and version, from a path, or from a catalogue's tarball
   * URL; audited, whatever the outcome.
   */
  installModule(request: { module: string; version?: string; url?: string }, caller: Caller): Promise<Info>;
  /**
   * Installs an uploaded tarball: `receive` writes it to the file it is given (a temporary one,
   * removed afterwards). Refused before `receive` runs when installing or uploading is disabled;
   * audited, whatever the outcome.
   */
  installUpload(receive: (file: string) => Promise<void>, caller: Caller): Promise<Info>;
  /** Removes an installed module and its nodes; audited, whatever the outcome. */
  removeModule(name: string, caller: Caller): Promise<void>;
  /** Enables or disables every set of a module; audited. */
  setModuleState(name: string, enabled: boolean, caller: Caller): Promise<Info>;
  /** Enables or disables one node set; audited. */
  setSetState(module: string, set: string, enabled: boolean, caller: Caller): Promise<Info>;
}

export function nodesApi(runtime: Runtime): NodesApi {
  const { registry, modules, log } = runtime;
  const palette = runtime.settings.externalModules.palette;
  const findModule = (name: string) => {
    const mod = registry.modules.get(name);
    if (!mod) throw new RunnelError('not_found', `Module ${name} is not installed`);
    return mod;
  };

  /** One audit line per install or removal attempt, whatever its outcome. */
  const audited = async <T extends { name: string; version?: string } | void>(
    event: 'nodes.install' | 'nodes.remove',
    fields: Record<string, unknown>,
    caller: Caller,
    task: () => Promise<T>,
  ): Promise<T> => {
    const who = { event, user: caller.user, ip: caller.ip, reqId: caller.reqId, ...fields };
    try {
      const result = await task();
      const done = result ? { module: result.name, version: result.version } : {};
      log.audit({ ...who, ...done, outcome: 'ok' }, event === 'nodes.install' ? 'node module installed' : 'node module removed');
      return result;
    } catch (err) {
      const code = err instanceof RunnelError ? err.code : 'internal_error';
      log.audit({ ...who, outcome: 'failed', code }, event === 'nodes.install' ? 'node module install failed' : 'node module removal failed');
      throw err;
    }
  };
  const stateChanged = (caller: Caller, fields: { module: string; set?: string }, enabled: boolean) =>
    log.audit(
      { event: 'nodes.state', user: caller.user, ip: caller.ip, reqId: caller.reqId, ...fields, enabled },
      `node ${fields.set === undefined ? 'module' : 'set'} ${enabled ? 'enabled' : 'disabled'}`,
    );

  return {
    listSets: () => registry.allSets(),
    listModules: () => [...registry.modules.values()],
    getModule: (name) => registry.modules.get(name),
    getSet: (module, set) => registry.modules.get(module)?.sets.get(set),
    listPluginSets: () => registry.allPluginSets(),
    getNodeList: () => registry.allSets().map((set) => setInfo(set, registry.modules.get(set.module))),
    getNodeInfo: (module, name) => {
      const set = registry.modules.get(module)?.sets.get(name);
      if (!set) throw new RunnelError('not_found', `No node set ${module}/${name}`);
      return setInfo(set, registry.modules.get(set.module));
    },
    getModuleInfo: (name) => moduleInfo(findModule(name)),
    getPluginList: () => registry.allPluginSets().map(pluginSetInfo),
    getPluginSet: (module, set) => registry.modules.get(module)?.plugins.get(set),
    getPluginInfo: (module, name) => {
      const set = registry.modules.get(module)?.plugins.get(name);
      if (!set) throw new RunnelError('not_found', 'Plugin not found');
      return pluginSetInfo(set);
    },
    getPlugin: (id) => registry.getPlugin(id),
    getPluginsByType: (type) => registry.getPluginsByType(type),
    installModule: async ({ module, version, url }, caller) => {
      const requested = { requested: module.slice(0, 256), requestedVersion: version, ...(url ? { url: urlForLogs(url) } : {}) };
      const install = url ? () => modules.installFromUrl(module, url) : () => modules.install(module, version);
      return moduleInfo(await audited('nodes.install', requested, caller, install));
    },
    installUpload: async (receive, caller) =>
      moduleInfo(
        await audited('nodes.install', { source: 'upload' }, caller, async () => {
          if (!palette.allowInstall) throw new RunnelError('install_not_allowed', 'Installing modules is disabled');
          if (!palette.allowUpload) throw new RunnelError('upload_not_allowed', 'Uploading modules is disabled');
          const dir = await mkdtemp(path.join(os.tmpdir(), 'runnel-upload-'));
          try {
            const file = path.join(dir, 'module.tgz');
            await receive(file);
            return await modules.installTarball(file);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        }),
      ),
    removeModule: (name, caller) => audited('nodes.remove', { module: name }, caller, () => modules.remove(name)),
    setModuleState: async (name, enabled, caller) => {
      const info = moduleInfo(await modules.setModuleEnabled(name, enabled));
      stateChanged(caller, { module: name }, enabled);
      return info;
    },
    setSetState: async (module, set, enabled, caller) => {
      const info = setInfo(await modules.setSetEnabled(module, set, enabled), registry.modules.get(module));
      stateChanged(caller, { module, set }, enabled);
      return info;
    },
  };
}
