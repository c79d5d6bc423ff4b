import { readFile, readdir, realpath } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ModuleInfo, NodeSetInfo } from '../../registry/registry.js';
import type { NodesApi } from '../../runtime/api/nodes.js';
import { readNodeModulePackage } from '../../registry/package.js';
import { QUEUE_NODES_HTML } from '../../nodes/queue/editor-html.js';
import { withI18nextPlurals } from './plurals.js';

const require = createRequire(import.meta.url);
/** `@node-red/nodes`: the core nodes' editor HTML, help, message catalog and icons. */
const CORE_NODES_DIR = path.dirname(require.resolve('@node-red/nodes/package.json'));
/** The module name the editor treats as the core (it picks the `node-red` i18n namespace by it). */
export const CORE_MODULE = 'node-red';
const FALLBACK_LANG = 'en-US';
/** Languages whose node HTML is kept: an editor's users rarely use more than a few. */
const MAX_LANGUAGES = 8;

interface SetFiles {
  /** The set's .html (definition and edit template). */
  html: string;
  /** Where `<lang>/<name>.html` help files are looked up: `<dir>/<lang>/<rest>`. */
  helpDir: string;
  helpRest: string;
  /** Folders the set's icons may come from. */
  iconDirs: string[];
  /** The set's message catalogs: `<dir>/<lang>/<base>.json`, or none for the core (one `node-red` namespace). */
  localesDir?: string;
  localesBase?: string;
}

/** Node-RED's set name for a core file: `20-inject.html` → `inject`, `70-CSV.html` → `CSV`. */
const coreSetName = (file: string) => path.basename(file, '.html').replace(/^\d+-/, '');

/** The core sets Runnel adds to Node-RED's, with their HTML (help inline, in English). */
const RUNNEL_CORE_HTML: Record<string, string | undefined> = { queue: QUEUE_NODES_HTML };

/** Core set name → its .html in @node-red/nodes (category folder and file). */
const CORE_FILES: Map<string, { category: string; file: string }> = (() => {
  const files = new Map<string, { category: string; file: string }>();
  const core = path.join(CORE_NODES_DIR, 'core');
  for (const category of readdirSync(core, { withFileTypes: true })) {
    if (!category.isDirectory()) continue;
    for (const file of readdirSync(path.join(core, category.name))) {
      if (file.endsWith('.html')) files.set(coreSetName(file), { category: category.name, file });
    }
  }
  return files;
})();

/**
 * What the editor needs of each node set besides its runtime code: its HTML (definition, edit
 * template, help in the asked language), message catalogs and icons. Core sets take these from
 * `@node-red/nodes` (Node-RED's own files, matched by set name); installed modules from their
 * package, beside each set's .js, as Node-RED reads them. Files are read once per module version.
 */
export class NodeResources {
  /**
   * Language → set → its HTML. The language is the client's to choose (`?lng=`, Accept-Language),
   * so only the most recently asked languages are kept: one entry per language held every set's
   * HTML (575 KB), and a `read` token asking 400 made-up languages grew the process by 250 MB.
   */
  private readonly html = new Map<string, Map<string, Promise<string>>>();
  private readonly files = new Map<string, Promise<SetFiles | null>>();

  constructor(private readonly nodes: Pick<NodesApi, 'listSets' | 'listModules' | 'getModule' | 'getSet'>) {}

  /** Node-RED's `<!-- --- [red-module:<id>] --- -->` block of one set, or '' when it has no HTML. */
  async setHtml(set: NodeSetInfo, lang = FALLBACK_LANG): Promise<string> {
    const key = `${set.id}@${set.version}`;
    const sets = this.languageCache(lang);
    let pending = sets.get(key);
    if (!pending) {
      pending = this.readSetHtml(set, lang);
      sets.set(key, pending);
    }
    return pending;
  }

  /** How many languages' HTML is kept. */
  get cachedLanguages(): number {
    return this.html.size;
  }

  /** The sets' HTML kept for `lang`, now the most recently used language; the least recent beyond MAX_LANGUAGES goes. */
  private languageCache(lang: string): Map<string, Promise<string>> {
    const sets = this.html.get(lang) ?? new Map<string, Promise<string>>();
    this.html.delete(lang);
    this.html.set(lang, sets);
    if (this.html.size > MAX_LANGUAGES) this.html.delete(this.html.keys().next().value!);
    return sets;
  }

  /** Every enabled, loaded set's HTML, in registry order, as GET /nodes answers the editor. */
  async allHtml(lang = FALLBACK_LANG): Promise<string> {
    const parts = await Promise.all(this.nodes.listSets().filter(isActive).map((set) => this.setHtml(set, lang)));
    return parts.join('');
  }

  /** The catalog of a namespace: `node-red` (core), a set id, or a module name. */
  async catalog(namespace: string, lang = FALLBACK_LANG): Promise<Record<string, unknown> | undefined> {
    if (namespace === CORE_MODULE) return readCatalog(path.join(CORE_NODES_DIR, 'locales'), 'messages', lang);
    const set = this.findSet(namespace);
    if (!set) return undefined;
    const files = await this.setFiles(set);
    if (!files?.localesDir || !files.localesBase) return undefined;
    return readCatalog(files.localesDir, files.localesBase, lang);
  }

  /** GET /nodes/messages: every namespace's catalog, the core's as `node-red`. */
  async allCatalogs(lang = FALLBACK_LANG): Promise<Record<string, unknown>> {
    const result: Record<string, unknown> = {};
    for (const set of this.nodes.listSets().filter(isActive)) {
      const ns = set.module === CORE_MODULE ? CORE_MODULE : set.id;
      if (ns in result) continue;
      const catalog = await this.catalog(ns, lang);
      if (catalog) result[ns] = catalog;
    }
    return result;
  }

  /** GET /icons: icon file names by module. */
  async iconLists(): Promise<Record<string, string[]>> {
    const result: Record<string, string[]> = {};
    for (const mod of this.nodes.listModules()) {
      const names = new Set<string>();
      for (const dir of await this.iconDirs(mod)) {
        for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) if (e.isFile() && /\.(?:png|svg|gif|jpe?g)$/i.test(e.name)) names.add(e.name);
      }
      if (names.size) result[mod.name] = [...names].sort();
    }
    return result;
  }

  /** The file behind `/icons/<module>/<icon>`, or undefined. */
  async iconFile(moduleName: string, icon: string): Promise<string | undefined> {
    const mod = this.nodes.getModule(moduleName);
    if (!mod || icon.includes('/') || icon.includes('\\') || icon.startsWith('.')) return undefined;
    for (const dir of await this.iconDirs(mod)) {
      const file = path.join(dir, icon);
      if (await readFile(file).then(() => true, () => false)) return file;
    }
    return undefined;
  }

  /** The default icon Node-RED falls back to. */
  readonly defaultIcon = path.join(CORE_NODES_DIR, 'icons', 'arrow-in.svg');

  /** A module's `resources/` folder (GET /resources/<module>/<path>), or undefined. */
  resourcesDir(moduleName: string): string | undefined {
    const mod = this.nodes.getModule(moduleName);
    return mod?.path ? path.join(mod.path, 'resources') : undefined;
  }

  private findSet(id: string): NodeSetInfo | undefined {
    const slash = id.lastIndexOf('/');
    if (slash <= 0) return undefined;
    return this.nodes.getSet(id.slice(0, slash), id.slice(slash + 1));
  }

  private async iconDirs(mod: ModuleInfo): Promise<string[]> {
    const dirs = new Set<string>();
    for (const set of mod.sets.values()) for (const dir of (await this.setFiles(set))?.iconDirs ?? []) dirs.add(dir);
    if (mod.path) dirs.add(path.join(mod.path, 'icons'));
    return [...dirs];
  }

  private setFiles(set: NodeSetInfo): Promise<SetFiles | null> {
    const key = `${set.id}@${set.version}`;
    let pending = this.files.get(key);
    if (!pending) {
      pending = this.locate(set).catch(() => null);
      this.files.set(key, pending);
    }
    return pending;
  }

  private async locate(set: NodeSetInfo): Promise<SetFiles | null> {
    const mod = this.nodes.getModule(set.module);
    if (!mod) return null;
    if (mod.builtin) {
      const core = CORE_FILES.get(set.name);
      if (!core) return null;
      return {
        html: path.join(CORE_NODES_DIR, 'core', core.category, core.file),
        helpDir: path.join(CORE_NODES_DIR, 'locales'),
        helpRest: path.join(core.category, core.file),
        iconDirs: [path.join(CORE_NODES_DIR, 'icons')],
      };
    }
    if (!mod.path) return null;
    const pkg = await readNodeModulePackage(mod.path);
    const rel = pkg.nodes[set.name];
    if (!rel) return null;
    const js = path.resolve(await realpath(mod.path), rel);
    const dir = path.dirname(js);
    const base = path.basename(js).replace(/\.[cm]?js$/, '');
    return {
      html: path.join(dir, `${base}.html`),
      helpDir: path.join(dir, 'locales'),
      helpRest: `${base}.html`,
      iconDirs: [path.join(dir, 'icons')],
      localesDir: path.join(dir, 'locales'),
      localesBase: base,
    };
  }

  private async readSetHtml(set: NodeSetInfo, lang: string): Promise<string> {
    const own = this.nodes.getModule(set.module)?.builtin ? RUNNEL_CORE_HTML[set.name] : undefined;
    const files = own === undefined ? await this.setFiles(set) : undefined;
    const content = own ?? (files ? await readFile(files.html, 'utf8').catch(() => undefined) : undefined);
    if (content === undefined) return '';
    const { main, help } = splitHelp(content);
    let text = help.get(lang) ?? help.get(FALLBACK_LANG);
    if (text === undefined && files) {
      for (const l of candidates(lang)) {
        text = await readFile(path.join(files.helpDir, l, files.helpRest), 'utf8').catch(() => undefined);
        if (text !== undefined) break;
      }
    }
    return `\n<!-- --- [red-module:${set.id}] --- -->\n${main}${text ?? ''}`;
  }
}

const isActive = (set: NodeSetInfo) => set.enabled && set.loaded && !set.err;

/** Languages to try: `de-CH` → de-CH, de, en-US. */
function candidates(lang: string): string[] {
  return [...new Set([lang, lang.split('-')[0], FALLBACK_LANG])];
}

/** Node-RED keeps inline `data-help-name` scripts apart, by their `data-lang` (default en-US). */
function splitHelp(content: string): { main: string; help: Map<string, string> } {
  const help = new Map<string, string>();
  let main = '';
  let index = 0;
  for (const m of content.matchAll(/<script[^>]* data-help-name=[\s\S]*?<\/script>/gi)) {
    main += content.slice(index, m.index);
    index = m.index + m[0].length;
    const lang = /<script[^>]* data-lang=['"](.+?)['"]/i.exec(m[0])?.[1] ?? FALLBACK_LANG;
    help.set(lang, (help.get(lang) ?? '') + m[0]);
  }
  return { main: main + content.slice(index), help };
}

export async function readCatalog(dir: string, base: string, lang: string): Promise<Record<string, unknown> | undefined> {
  for (const l of candidates(lang)) {
    const text = await readFile(path.join(dir, l, `${base}.json`), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    try {
      return withI18nextPlurals(JSON.parse(text) as Record<string, unknown>);
    } catch {
      return undefined;
    }
  }
  return undefined;
}
