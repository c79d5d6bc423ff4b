import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type Semver from 'semver';
import { lazy } from '../base/lazy.js';

const semver = lazy<typeof Semver>('semver');
import { NODE_RED_COMPAT_VERSION } from '../base/version.js';
import type { Catalogs, LoaderHost } from './host.js';
import { RunnelError, errorMessage, isRunnelError } from '../base/errors.js';
import type { ModuleInfo, NodeSetInfo } from './registry.js';
import { readNodeModulePackage, type NodeModulePackage } from './package.js';
import { exists } from '../storage/atomic-file.js';

/** Enabled flags by set name; sets not listed are enabled. */
export type SetFlags = Record<string, boolean>;

export interface LoadResult {
  module: ModuleInfo;
  /** Types this module tried to register that another module already provides. */
  conflicts: { type: string; module: string }[];
}

/**
 * Loads one Node-RED module directory into the registry: every set's declared types (from its
 * .html), its locales, and, for enabled sets, its code. A set whose code throws is recorded in
 * `set.err`; the other sets still load. Throws only for problems with the module as a whole.
 */
export async function loadModule(host: LoaderHost, dir: string, flags: SetFlags = {}): Promise<LoadResult> {
  const pkg = await readNodeModulePackage(dir);
  if (pkg.range && !semver().satisfies(NODE_RED_COMPAT_VERSION, pkg.range, { includePrerelease: true })) {
    throw new RunnelError('node_red_version_unsupported', `${pkg.name} needs Node-RED ${pkg.range}; Runnel presents ${NODE_RED_COMPAT_VERSION}`);
  }
  const registry = host.registry;
  if (registry.modules.has(pkg.name)) throw new RunnelError('module_already_loaded', `Module ${pkg.name} is already loaded`);
  const real = await realpath(dir);
  const mod = registry.addModule({ name: pkg.name, version: pkg.version, path: dir, builtin: false });
  const conflicts: LoadResult['conflicts'] = [];
  // One module scope for all its sets, as Node.js itself would give: files the sets share
  // (a dashboard's common store) are loaded once. Only copies left by an earlier version go.
  purgeRequireCache(real);
  generation++;
  // Node-RED loads a module's plugins before its nodes, each list in package.json order.
  for (const [setName, rel] of Object.entries(pkg.plugins)) {
    // Node-RED's rule: the entry names the plugin; its .js (or .cjs) is the runtime part, its .html the editor's.
    const base = path.resolve(real, rel).replace(/\.[^./]+$/, '');
    const code = (await exists(`${base}.js`)) ? `${base}.js` : (await exists(`${base}.cjs`)) ? `${base}.cjs` : undefined;
    const template = (await exists(`${base}.html`)) ? `${base}.html` : undefined;
    const catalog = code || template ? { dir: path.join(path.dirname(base), 'locales'), base: path.basename(base) } : undefined;
    const set = registry.addPluginSet(pkg.name, setName, { template, runtime: code !== undefined, catalog });
    if (code) await runSet(host, set, { file: code, pkg, real, conflicts });
    else set.loaded = true;
  }
  const declared = await Promise.all(Object.values(pkg.nodes).map((rel) => declaredTypes(path.resolve(real, rel))));
  for (const [i, [setName, rel]] of Object.entries(pkg.nodes).entries()) {
    const set = registry.addSet(pkg.name, setName);
    set.enabled = flags[setName] ?? true;
    const file = path.resolve(real, rel);
    set.types = declared[i];
    const taken = set.types
      .map((type) => ({ type, owner: registry.isBuiltinType(type) ? undefined : registry.getTypeSet(type) }))
      .find((t) => t.owner && t.owner !== set);
    if (taken) {
      conflicts.push({ type: taken.type, module: taken.owner!.module });
      set.err = `${taken.type} already registered`;
      continue;
    }
    if (set.enabled) await runSet(host, set, { file, pkg, real, conflicts });
  }
  return { module: mod, conflicts };
}

/** Runs a set's code again (enabling a set that never loaded). */
export async function loadSetCode(host: LoaderHost, mod: ModuleInfo, set: NodeSetInfo): Promise<void> {
  if (!mod.path) return;
  const pkg = await readNodeModulePackage(mod.path);
  const real = await realpath(mod.path);
  const rel = pkg.nodes[set.name];
  if (rel) await runSet(host, set, { file: path.resolve(real, rel), pkg, real, conflicts: [] });
}

/** Removes a module's types and sets from the registry and drops its code from the module cache. */
export async function unloadModule(host: LoaderHost, mod: ModuleInfo): Promise<void> {
  for (const set of mod.sets.values()) host.registry.removeSetTypes(set);
  host.registry.removePlugins(mod);
  host.registry.modules.delete(mod.name);
  if (mod.path) purgeRequireCache(await realpath(mod.path).catch(() => mod.path!));
}

/**
 * Loads several module directories, each after the Node-RED modules it names in
 * `node-red.dependencies`. A module that cannot load is logged and skipped, as is one `accept`
 * refuses (it says why).
 */
export async function loadModules(
  host: LoaderHost,
  dirs: string[],
  flagsOf: (name: string) => SetFlags = () => ({}),
  accept: (pkg: NodeModulePackage) => boolean = () => true,
): Promise<void> {
  const found = new Map<string, { dir: string; pkg: NodeModulePackage }>();
  for (const dir of dirs) {
    try {
      const pkg = await readNodeModulePackage(dir);
      if (!found.has(pkg.name) && accept(pkg)) found.set(pkg.name, { dir, pkg });
    } catch (err) {
      host.log.warn({ dir, err: errorMessage(err) }, 'not loading node module');
    }
  }
  for (const { dir, pkg } of dependencyOrder(found)) {
    try {
      const { conflicts } = await loadModule(host, dir, flagsOf(pkg.name));
      for (const c of conflicts) host.log.warn({ module: pkg.name, type: c.type, owner: c.module }, `type ${c.type} already registered by ${c.module}`);
      host.log.info({ module: pkg.name, version: pkg.version }, 'node module loaded');
    } catch (err) {
      host.log.warn({ module: pkg.name, dir, err: errorMessage(err) }, `node module ${pkg.name} not loaded`);
    }
  }
}

/** The module directories a nodesDir entry holds: itself if it is a module, else its subdirectories. */
export async function modulesIn(dir: string): Promise<string[]> {
  try {
    await readNodeModulePackage(dir);
    return [dir];
  } catch {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const dirs: string[] = [];
    for (const e of entries) {
      if (!e.isDirectory() || e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const sub = path.join(dir, e.name);
      if (e.name.startsWith('@')) dirs.push(...(await modulesIn(sub)));
      else if (await readNodeModulePackage(sub).then(() => true, () => false)) dirs.push(sub);
    }
    return dirs;
  }
}

/**
 * The Node-RED modules npm put in a `node_modules` directory (top level and scopes, links
 * followed), as Node-RED scans the user directory: modules installed as another module's
 * dependency load like the ones installed by name.
 */
export async function nodeRedModulesIn(nodeModules: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (dir: string, scoped: boolean) => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (name.startsWith('.')) continue;
      const sub = path.join(dir, name);
      if (!(await stat(sub).then((st) => st.isDirectory(), () => false))) continue;
      if (!scoped && name.startsWith('@')) await visit(sub, true);
      else if (await readNodeModulePackage(sub).then(() => true, () => false)) found.push(sub);
    }
  };
  await visit(nodeModules, false);
  return found;
}

function dependencyOrder(found: Map<string, { dir: string; pkg: NodeModulePackage }>) {
  const ordered: { dir: string; pkg: NodeModulePackage }[] = [];
  const visiting = new Set<string>();
  const visit = (name: string) => {
    const entry = found.get(name);
    if (!entry || visiting.has(name) || ordered.includes(entry)) return;
    visiting.add(name);
    for (const dep of entry.pkg.dependencies) visit(dep);
    ordered.push(entry);
  };
  for (const name of found.keys()) visit(name);
  return ordered;
}

interface SetSource {
  file: string;
  pkg: NodeModulePackage;
  real: string;
  conflicts: LoadResult['conflicts'];
}

async function runSet(host: LoaderHost, set: NodeSetInfo, { file, pkg, real, conflicts }: SetSource): Promise<void> {
  const declared = set.types;
  // The types the code registers are the truth; the .html list only stands in until it runs.
  set.types = [];
  delete set.err;
  try {
    const entry = await importSet(file, pkg.esm);
    if (typeof entry === 'function') {
      await entry(host.redApiFor(set, { moduleDir: real, catalogs: await readCatalogs(file) }));
    }
    set.loaded = true;
  } catch (err) {
    host.registry.removeSetTypes(set);
    set.types = declared;
    set.err = errorMessage(err);
    if (isRunnelError(err) && err.code === 'type_already_registered') {
      conflicts.push({ type: String(err.details?.type), module: String(err.details?.module) });
    }
    host.log.warn({ set: set.id, err: set.err }, `node set ${set.id} failed to load`);
  }
}

let generation = 0;

/** What require() throws for a file Node loads only as an ES module (a folder's own "type", top-level await). */
const ESM_ONLY = new Set(['ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE']);

/**
 * Imports a set file; any ES module loads, as Node-RED 5 loads every set with import(). An
 * upgraded or re-installed module must run its new code: ESM through a cache-busting query (one
 * per module load), CommonJS because loadModule dropped the module's cache entries before its
 * first set.
 */
async function importSet(file: string, esm: boolean): Promise<unknown> {
  const ext = path.extname(file);
  const importEsm = async () => ((await import(`${pathToFileURL(file).href}?v=${generation}`)) as { default?: unknown }).default;
  if (ext === '.mjs' || (ext !== '.cjs' && esm)) return importEsm();
  let exported: { __esModule?: boolean; default?: unknown } | undefined;
  try {
    exported = createRequire(file)(file) as typeof exported;
  } catch (err) {
    if (ESM_ONLY.has(String((err as { code?: unknown }).code))) return importEsm();
    throw err;
  }
  if (exported && typeof exported !== 'function' && (exported.__esModule || typeof exported.default === 'function')) return exported.default;
  return exported;
}

function purgeRequireCache(moduleDir: string): void {
  const cache = createRequire(import.meta.url).cache;
  const prefix = moduleDir + path.sep;
  for (const key of Object.keys(cache)) if (key.startsWith(prefix)) delete cache[key];
}

/** Node-RED's rule: a set's types are the `data-template-name`s of its companion .html. */
async function declaredTypes(file: string): Promise<string[]> {
  const html = await readFile(file.replace(/\.[cm]?js$/, '') + '.html', 'utf8').catch(() => '');
  const types: string[] = [];
  for (const m of html.matchAll(/<script[^>]*\sdata-template-name\s*=\s*["']([^"']+)["']/gi)) {
    if (!types.includes(m[1])) types.push(m[1]);
  }
  return types;
}

/** `locales/<lang>/<basename>.json` beside the set file. */
async function readCatalogs(file: string): Promise<Catalogs> {
  const localesDir = path.join(path.dirname(file), 'locales');
  const base = path.basename(file).replace(/\.[cm]?js$/, '');
  const catalogs: Catalogs = {};
  const langs = await readdir(localesDir, { withFileTypes: true }).catch(() => []);
  for (const lang of langs) {
    if (!lang.isDirectory()) continue;
    try {
      catalogs[lang.name] = JSON.parse(await readFile(path.join(localesDir, lang.name, `${base}.json`), 'utf8')) as Record<string, unknown>;
    } catch {
      // A language without a catalog for this set, or an unreadable one: RED._ falls back to keys.
    }
  }
  return catalogs;
}
