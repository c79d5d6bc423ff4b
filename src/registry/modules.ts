import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ModuleHost } from './host.js';
import { pluginSetInfo, setInfo } from './info.js';
import { RunnelError, errorMessage } from '../base/errors.js';
import { SerialQueue } from '../base/serial-queue.js';
import type { ModuleInfo, NodeSetInfo } from './registry.js';
import { loadModule, loadModules, loadSetCode, modulesIn, nodeRedModulesIn, unloadModule, type SetFlags } from './loader.js';
import { readNodeModulePackage, type NodeModulePackage } from './package.js';
import { ModuleRules } from './module-rules.js';
import { readNodeRedFlags, writeNodeRedFlags } from './node-red-config.js';
import { AutoInstaller, missingModules } from './auto-install.js';
import { inspectTarball } from './tarball.js';
import { downloadTarball } from './download.js';
import { ModuleSync, REMOVABLE, type LocalModules, type ModuleRecord, type ModuleSource, type ModuleState } from './module-sync.js';
import type { RuntimeConfig } from '../storage/contract.js';
import { assertAllowed, assertInstallableManifest, assertRegistryInstallAllowed, assertUpdateAllowed, npmInstall, npmUninstall, parseInstallTarget, type NpmContext } from './installer.js';
import { InstallSnapshot } from './install-snapshot.js';
import { findNpm, npmNotFoundMessage } from './npm.js';
import { leftOutBy } from './load-filter.js';

/**
 * The runtime-config key holding installed modules and set enabled flags. Not `modules`, where
 * Runnel kept them before: Node-RED's storage moves that key into .config.modules.json (its record
 * of function-node modules), where Runnel no longer found them and Node-RED kept them as its own.
 */
const CONFIG_KEY = 'runnelModules';
const OLD_CONFIG_KEY = 'modules';

/**
 * With shared storage each instance records what its own user dir has under its own key; what
 * every instance should have is the shared list (ModuleSync).
 */
function configKey(host: ModuleHost, base = CONFIG_KEY): string {
  const shared = host.storage.shared;
  return shared ? `${base}@${shared.instanceId}` : base;
}

/** Runnel's records under the old key; not Node-RED's own `modules` (a storageModule's settings hold it). */
function oldRecords(config: RuntimeConfig, key: string): Record<string, ModuleRecord> | undefined {
  const value = config[key];
  if (typeof value !== 'object' || value === null) return undefined;
  const records = Object.values(value as Record<string, unknown>);
  return records.every((r) => typeof (r as Partial<ModuleRecord> | null)?.source === 'string') ? (value as Record<string, ModuleRecord>) : undefined;
}

/**
 * Installs, upgrades, removes, enables and disables node modules, one change at a time, and keeps
 * the list (with enabled flags) in the runtime config so the next start loads the same modules.
 * With shared storage, every change made here is published and the others' are followed.
 */
export class ModuleManager implements LocalModules {
  private readonly queue = new SerialQueue();
  records: Record<string, ModuleRecord> = {};
  private loaded = false;
  /** Present with shared storage: the list every instance follows. */
  readonly sync: ModuleSync | undefined;

  private readonly autoInstaller: AutoInstaller;

  constructor(private readonly host: ModuleHost) {
    const shared = host.storage.shared;
    this.sync = shared && new ModuleSync(shared.modules, this, host.log.child({ module: 'modules' }));
    const retryMs = host.settings.externalModules.autoInstallRetry;
    this.autoInstaller = new AutoInstaller({ log: host.log, retryMs, install: (name, version) => this.install(name, version), clock: host.clock });
  }

  /** Stops installing missing modules (the runtime stops). */
  stop(): void {
    this.autoInstaller.stop();
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(task);
  }

  loadedSets(name: string): SetFlags | undefined {
    const mod = this.host.registry.modules.get(name);
    return mod && Object.fromEntries([...mod.sets.values()].map((s) => [s.name, s.enabled]));
  }

  /** Each loaded module's version, and the changes in progress or failed here (GET /cluster). */
  states(): Record<string, ModuleState> {
    const out: Record<string, ModuleState> = {};
    for (const m of this.host.registry.modules.values()) if (!m.builtin) out[m.name] = { version: m.version, state: 'installed' };
    for (const [name, state] of this.sync?.states ?? []) out[name] = state;
    return out;
  }

  private get nodeModules(): string {
    return path.join(this.host.settings.userDir, 'node_modules');
  }

  /**
   * After npm changed the user dir: loads the Node-RED modules it brought in as dependencies
   * (a dashboard under a widget module) and unloads the ones it pruned.
   */
  private async syncDependencies(): Promise<void> {
    const present = await nodeRedModulesIn(this.nodeModules);
    const fresh: string[] = [];
    const names = new Set<string>();
    for (const dir of present) {
      const name = (await readNodeModulePackage(dir)).name;
      names.add(name);
      if (!this.host.registry.modules.has(name)) fresh.push(dir);
    }
    if (fresh.length) {
      await loadModules(this.host, fresh.filter((dir) => this.notLeftOut(dir)), (name) => this.records[name]?.sets ?? {}, (pkg) => this.loadAllowed(pkg));
      for (const mod of this.host.registry.modules.values()) {
        if (!this.records[mod.name] && mod.path && this.inNodeModules(mod.path)) this.records[mod.name] = { source: 'dependency', version: mod.version, sets: {} };
      }
    }
    const prefix = this.nodeModules + path.sep;
    for (const mod of [...this.host.registry.modules.values()]) {
      if (mod.builtin || !mod.path?.startsWith(prefix) || names.has(mod.name) || REMOVABLE.includes(this.records[mod.name]?.source)) continue;
      await unloadModule(this.host, mod);
      if (this.records[mod.name]?.source === 'dependency') delete this.records[mod.name];
      this.host.log.info({ module: mod.name }, 'node module removed with the module that needed it');
    }
  }

  private inNodeModules(dir: string): boolean {
    return dir.startsWith(this.nodeModules + path.sep);
  }

  private get ctx(): NpmContext {
    const { settings, log, events } = this.host;
    // Node-RED's event log: one id per npm run, each output line an entry (`event-log/<id>` on /comms).
    const id = `npm-${Date.now().toString(36)}`;
    const onLine = (line: string, stream: 'out' | 'err') => events.emit('event-log', { id, payload: { ts: Date.now(), data: line, type: stream === 'err' ? 'error' : undefined } });
    return { userDir: settings.userDir, palette: settings.externalModules.palette, log, onLine };
  }

  /** Loads `nodesDir` modules and the installed ones, and applies stored set flags. Runs once, before flows start. */
  async loadInstalled(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    const { settings, registry } = this.host;
    const config = await this.host.storage.getRuntimeConfig();
    const stored = config[configKey(this.host)] ?? oldRecords(config, configKey(this.host, OLD_CONFIG_KEY));
    this.records = stored && typeof stored === 'object' ? { ...(stored as Record<string, ModuleRecord>) } : {};
    // Node-RED's flags win for the sets they name: Runnel writes its own there at every change, so
    // a newer flag there was set on Node-RED.
    const nodeRed = await readNodeRedFlags(settings.userDir);
    const flagsOf = (name: string): SetFlags => ({ ...this.records[name]?.sets, ...nodeRed[name] });
    const dirs: string[] = [];
    for (const dir of settings.nodesDir) dirs.push(...(await modulesIn(dir)));
    for (const [name, rec] of Object.entries(this.records)) {
      if (REMOVABLE.includes(rec.source)) dirs.push(path.join(settings.userDir, 'node_modules', name));
    }
    dirs.push(...(await nodeRedModulesIn(this.nodeModules)));
    await loadModules(this.host, dirs.filter((dir) => this.notLeftOut(dir)), flagsOf, (pkg) => this.loadAllowed(pkg));
    for (const mod of registry.modules.values()) {
      const rec = this.records[mod.name];
      if (mod.builtin) for (const set of mod.sets.values()) registry.setEnabled(set, flagsOf(mod.name)[set.name] ?? true);
      else if (!rec && mod.path) this.records[mod.name] = { source: this.inNodeModules(mod.path) ? 'dependency' : 'nodesDir', version: mod.version, sets: {} };
    }
    await this.writeNodeRedFlags();
    const { palette, modules, autoInstall } = settings.externalModules;
    if (autoInstall && palette.allowInstall) this.autoInstaller.start(await missingModules(settings.userDir, this.records, (name) => registry.modules.has(name)));
    // Said once, at start, rather than discovered at the first install.
    if ((palette.allowInstall || (settings.functionExternalModules && modules.allowInstall)) && !findNpm()) {
      this.host.log.warn(`${npmNotFoundMessage()}; until then every install answers npm_not_found`);
    }
  }

  /** Node-RED's `nodesIncludes`/`nodesExcludes` name a module by its directory's name (within its scope). */
  private notLeftOut(dir: string): boolean {
    const by = leftOutBy(this.host.settings, path.basename(dir));
    if (by === undefined) return true;
    this.host.log.info({ dir }, `node module ${path.basename(dir)} not loaded: ${by === 'nodesExcludes' ? 'nodesExcludes names it' : 'nodesIncludes does not name it'}`);
    return false;
  }

  /** As in Node-RED, a module the palette's allowList/denyList refuse is not loaded either. */
  private loadAllowed(pkg: NodeModulePackage): boolean {
    const { allowList, denyList } = this.host.settings.externalModules.palette;
    if (new ModuleRules(allowList, denyList).allows(pkg.name, pkg.version)) return true;
    this.host.log.info({ module: pkg.name, version: pkg.version }, `node module ${pkg.name} not loaded: externalModules.palette's allowList/denyList refuse it`);
    return false;
  }

  /** POST /nodes with `{module, version}`: a registry package or an absolute directory path. */
  async install(module: string, version?: string): Promise<ModuleInfo> {
    const palette = this.ctx.palette;
    if (!palette.allowInstall) throw new RunnelError('install_not_allowed', 'Installing modules is disabled');
    const target = parseInstallTarget(module, version);
    if (target.kind === 'path') {
      if (!palette.allowLocalPaths) throw new RunnelError('local_path_not_allowed', 'Installing from a local path is disabled');
      return this.queue.run(async () => {
        await this.sync?.assertReachable();
        const pkg = await readNodeModulePackage(target.dir);
        assertAllowed(pkg.name, palette);
        assertInstallableManifest(pkg, palette);
        this.assertInstallable(pkg.name, pkg.version);
        return this.published(await this.installSpec(pkg.name, target.dir, 'local', target.dir), null);
      });
    }
    await assertRegistryInstallAllowed(target.name, target.version, this.ctx);
    return this.queue.run(async () => {
      await this.sync?.assertReachable();
      this.assertInstallable(target.name, target.version);
      return this.published(await this.installSpec(target.name, target.version ? `${target.name}@${target.version}` : target.name, 'npm'), null);
    });
  }

  /** Tells the other instances about a module installed here (with the bytes of an upload). */
  private async published(mod: ModuleInfo, tarball: Buffer | null): Promise<ModuleInfo> {
    await this.sync?.publish(mod.name, this.records[mod.name], tarball);
    return mod;
  }

  /**
   * POST /nodes with `{module, url}`, as the editor sends for a palette catalogue entry with a
   * `pkg_url`: the tarball is fetched and installed like an upload (so `allowUpload` applies, and
   * in a cluster the other instances get the same bytes), and must hold `module`.
   */
  async installFromUrl(module: string, url: string): Promise<ModuleInfo> {
    const palette = this.ctx.palette;
    if (!palette.allowInstall) throw new RunnelError('install_not_allowed', 'Installing modules is disabled');
    if (!palette.allowUpload) throw new RunnelError('upload_not_allowed', 'Installing a module from a URL installs a tarball, and uploading modules is disabled');
    // Refused before the download when its version cannot change the answer.
    if (!new ModuleRules(palette.allowList, palette.denyList).versioned) assertAllowed(module, palette);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'runnel-download-'));
    try {
      const file = path.join(dir, 'module.tgz');
      await downloadTarball(url, file, palette.maxUploadSize);
      return await this.queue.run(async () => {
        await this.sync?.assertReachable();
        const mod = await this.installTarballFile(file, undefined, module);
        return this.published(mod, this.sync ? await readFile(this.keptTarball(mod.name, mod.version)) : null);
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** POST /nodes with a tarball; `file` is a temporary upload the caller deletes afterwards. */
  async installTarball(file: string): Promise<ModuleInfo> {
    const palette = this.ctx.palette;
    if (!palette.allowInstall) throw new RunnelError('install_not_allowed', 'Installing modules is disabled');
    if (!palette.allowUpload) throw new RunnelError('upload_not_allowed', 'Uploading modules is disabled');
    return this.queue.run(async () => {
      await this.sync?.assertReachable();
      const mod = await this.installTarballFile(file);
      return this.published(mod, this.sync ? await readFile(this.keptTarball(mod.name, mod.version)) : null);
    });
  }

  private async installTarballFile(file: string, flags?: SetFlags, expected?: string): Promise<ModuleInfo> {
    const palette = this.ctx.palette;
    const pkg = await inspectTarball(file);
    if (expected !== undefined && pkg.name !== expected) throw new RunnelError('invalid_module', `The tarball for ${expected} holds ${pkg.name}`);
    assertAllowed(pkg.name, palette, pkg.version);
    assertInstallableManifest(pkg, palette);
    this.assertInstallable(pkg.name, pkg.version);
    const nodesDir = path.join(this.ctx.userDir, 'nodes');
    const created = await mkdir(nodesDir, { recursive: true });
    const kept = this.keptTarball(pkg.name, pkg.version);
    await copyFile(file, kept);
    try {
      return await this.installSpec(pkg.name, kept, 'tarball', undefined, flags);
    } catch (err) {
      await rm(created ?? kept, { recursive: true, force: true });
      throw err;
    }
  }

  /** A module of the shared list, installed here from where its record says, under this instance's policy. */
  async installWanted(name: string, want: ModuleRecord, tarball: () => Promise<Buffer | undefined>): Promise<void> {
    const palette = this.ctx.palette;
    if (!palette.allowInstall) throw new RunnelError('install_not_allowed', 'Installing modules is disabled');
    if (want.source === 'tarball') {
      if (!palette.allowUpload) throw new RunnelError('upload_not_allowed', 'Uploading modules is disabled');
      const bytes = await tarball();
      if (!bytes) throw new RunnelError('not_found', `The shared list has no tarball for ${name}`);
      const dir = await mkdtemp(path.join(os.tmpdir(), 'runnel-shared-module-'));
      try {
        await writeFile(path.join(dir, 'module.tgz'), bytes);
        await this.installTarballFile(path.join(dir, 'module.tgz'), want.sets, name);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      return;
    }
    if (want.source === 'local') {
      if (!palette.allowLocalPaths) throw new RunnelError('local_path_not_allowed', 'Installing from a local path is disabled');
      const dir = parseInstallTarget(want.path ?? '', undefined);
      if (dir.kind !== 'path') throw new RunnelError('invalid_module', `The shared list has no directory for ${name}`);
      const pkg = await readNodeModulePackage(dir.dir);
      if (pkg.name !== name) throw new RunnelError('invalid_module', `${dir.dir} now holds ${pkg.name}, not ${name}`);
      assertAllowed(name, palette);
      assertInstallableManifest(pkg, palette);
      this.assertInstallable(name, pkg.version);
      await this.installSpec(name, dir.dir, 'local', dir.dir, want.sets);
      return;
    }
    const target = parseInstallTarget(name, want.version);
    if (target.kind !== 'registry') throw new RunnelError('invalid_module_name', `Invalid module name: ${name}`);
    assertAllowed(name, palette, want.version);
    this.assertInstallable(name, want.version);
    await this.installSpec(name, `${name}@${want.version}`, 'npm', undefined, want.sets);
  }

  /** DELETE /nodes/:module; in a cluster also a module only the shared list has (it failed here). */
  remove(name: string): Promise<void> {
    return this.queue.run(async () => {
      await this.sync?.assertReachable();
      if (this.sync && !this.host.registry.modules.has(name) && (await this.sync.has(name))) return this.sync.publish(name, undefined);
      await this.removeInstalled(name);
      await this.sync?.publish(name, undefined);
    });
  }

  /** Removes a module from this instance only. */
  async removeInstalled(name: string): Promise<void> {
    const mod = this.find(name);
    if (mod.builtin || !REMOVABLE.includes(this.records[name]?.source)) {
      throw new RunnelError('module_not_removable', `Module ${name} was not installed through the admin API and cannot be removed`);
    }
    this.assertNotInUse([...mod.sets.values()]);
    await npmUninstall(name, this.ctx);
    await unloadModule(this.host, mod);
    await this.syncDependencies();
    if (this.records[name].source === 'tarball') await rm(this.keptTarball(name, mod.version), { force: true });
    delete this.records[name];
    await this.persist(name);
    this.host.log.info({ module: name }, 'node module removed');
    this.notify('node/removed', [...mod.sets.values()].map((set) => setInfo(set, mod)));
  }

  /** PUT /nodes/:module `{enabled}`: every set of the module. */
  async setModuleEnabled(name: string, enabled: boolean): Promise<ModuleInfo> {
    const mod = this.find(name);
    return this.queue.run(async () => {
      await this.sync?.assertReachable();
      await this.applyEnabled(mod, [...mod.sets.values()], enabled);
      await this.sync?.publish(name, this.records[name]);
      return mod;
    });
  }

  /** PUT /nodes/:module/:set `{enabled}`. */
  async setSetEnabled(name: string, setName: string, enabled: boolean): Promise<NodeSetInfo> {
    const mod = this.find(name);
    const set = mod.sets.get(setName);
    if (!set) throw new RunnelError('not_found', `Node set ${name}/${setName} not found`);
    return this.queue.run(async () => {
      await this.sync?.assertReachable();
      await this.applyEnabled(mod, [set], enabled);
      await this.sync?.publish(name, this.records[name]);
      return set;
    });
  }

  /** Node-RED's events for a new module: its plugin sets (the editor then loads their templates), then its node sets, each only when there are any. */
  private announceAdded(mod: ModuleInfo): void {
    if (mod.plugins.size > 0) this.notify('plugin/added', [...mod.plugins.values()].map(pluginSetInfo));
    if (mod.sets.size > 0) this.notify('node/added', [...mod.sets.values()].map((set) => setInfo(set, mod)));
  }

  /** Node-RED's runtime events for the editor's palette (`notification/node/...` on /comms). */
  private notify(id: string, payload: unknown): void {
    this.host.events.emit('runtime-event', { id, payload, retain: false });
  }

  private find(name: string): ModuleInfo {
    const mod = this.host.registry.modules.get(name);
    if (!mod) throw new RunnelError('not_found', `Module ${name} not found`);
    return mod;
  }

  /** Sets the enabled flags the shared list gives (sets it does not name keep theirs). */
  async applyFlags(name: string, sets: SetFlags): Promise<void> {
    const mod = this.find(name);
    for (const [setName, enabled] of Object.entries(sets)) {
      const set = mod.sets.get(setName);
      if (set && set.enabled !== enabled) await this.applyEnabled(mod, [set], enabled);
    }
  }

  private assertInstallable(name: string, version: string | undefined): void {
    const mod = this.host.registry.modules.get(name);
    if (!mod) return;
    if (this.records[name]?.source === 'dependency') return;
    if (mod.builtin || !REMOVABLE.includes(this.records[name]?.source) || version === undefined || version === mod.version) {
      throw new RunnelError('module_already_loaded', `Module ${name} is already loaded at version ${mod.version}`);
    }
    assertUpdateAllowed(name, this.host.settings.externalModules.palette);
  }

  private assertNotInUse(sets: NodeSetInfo[]): void {
    const types = new Set(sets.flatMap((s) => s.types));
    const used = this.host.getFlows().flows.find((n) => types.has(n.type));
    if (used) throw new RunnelError('type_in_use', `Type in use: ${used.type}`);
  }

  private async applyEnabled(mod: ModuleInfo, sets: NodeSetInfo[], enabled: boolean): Promise<void> {
    if (!enabled) this.assertNotInUse(sets.filter((s) => s.enabled));
    for (const set of sets) {
      const changed = set.enabled !== enabled;
      this.host.registry.setEnabled(set, enabled);
      if (enabled && !set.loaded && !mod.builtin) await loadSetCode(this.host, mod, set);
      if (changed) this.notify(enabled ? 'node/enabled' : 'node/disabled', setInfo(set, mod));
    }
    const rec = (this.records[mod.name] ??= { source: mod.builtin ? 'builtin' : 'nodesDir', version: mod.version, sets: {} });
    for (const set of mod.sets.values()) rec.sets[set.name] = set.enabled;
    await this.persist();
  }

  /**
   * npm-installs `spec` and loads the module from `<userDir>/node_modules`. An upgrade swaps the
   * code in place and restarts the nodes of its types so they run the new version. Any failure puts
   * the user dir and the registry back as they were.
   */
  private async installSpec(name: string, spec: string, source: ModuleSource, localPath?: string, flags?: SetFlags): Promise<ModuleInfo> {
    const ctx = this.ctx;
    const previous = this.host.registry.modules.get(name);
    const snapshot = await InstallSnapshot.take(ctx, name);
    const dir = path.join(ctx.userDir, 'node_modules', name);
    let loaded: ModuleInfo | undefined;
    let unloaded = false;
    try {
      await npmInstall(spec, ctx);
      if (previous) {
        await unloadModule(this.host, previous);
        unloaded = true;
      }
      const result = await loadModule(this.host, dir, flags ?? this.records[name]?.sets ?? {});
      loaded = result.module;
      const conflict = result.conflicts[0];
      if (conflict) {
        throw new RunnelError('type_already_registered', `${conflict.type} already registered by ${conflict.module}`, { ...conflict });
      }
    } catch (err) {
      if (loaded) await unloadModule(this.host, loaded);
      await snapshot.restore();
      if (previous && unloaded) await this.reload(name, previous.path ?? dir);
      throw err;
    }
    await snapshot.discard();
    this.records[name] = {
      source, version: loaded.version, sets: Object.fromEntries([...loaded.sets.values()].map((s) => [s.name, s.enabled])), ...(localPath ? { path: localPath } : {}),
    };
    this.host.log.info({ module: name, version: loaded.version }, previous ? 'node module upgraded' : 'node module installed');
    await this.syncDependencies();
    await this.persist();
    if (previous) await this.host.restartNodesOfTypes(new Set([...loaded.sets.values()].flatMap((s) => s.types)));
    if (previous) this.notify('node/upgraded', { module: name, version: loaded.version });
    else this.announceAdded(loaded);
    return loaded;
  }

  private async reload(name: string, dir: string): Promise<void> {
    try {
      await loadModule(this.host, dir, this.records[name]?.sets ?? {});
    } catch (err) {
      this.host.log.error({ dir, err: errorMessage(err) }, 'could not reload the previous module version');
    }
  }

  /** Where an uploaded tarball is kept while its module is installed (npm records it as `file:nodes/…`). */
  private keptTarball(name: string, version: string): string {
    const dir = path.join(this.ctx.userDir, 'nodes');
    const file = path.join(dir, `${name.replace(/^@/, '').replace(/\//g, '-')}-${version}.tgz`);
    // Name and version are validated before an install; a record edited by hand must not reach outside either.
    if (path.dirname(file) !== dir) throw new RunnelError('invalid_module', `Module ${name}@${version} cannot be kept as a file`);
    return file;
  }

  private async persist(removed?: string): Promise<void> {
    const old = configKey(this.host, OLD_CONFIG_KEY);
    await this.host.updateRuntimeConfig((config) => {
      const { [old]: _moved, ...rest } = config;
      return { ...(oldRecords(config, old) ? rest : config), [configKey(this.host)]: this.records };
    });
    await this.writeNodeRedFlags(removed);
  }

  /** Node-RED's `.config.nodes.json` follows: a failure to write it is said, and changes nothing here. */
  private async writeNodeRedFlags(removed?: string): Promise<void> {
    try {
      await writeNodeRedFlags(this.host.settings.userDir, this.host.registry.modules.values(), removed);
    } catch (err) {
      this.host.log.warn({ err: errorMessage(err) }, "could not record the node sets' enabled flags in .config.nodes.json for Node-RED");
    }
  }
}
