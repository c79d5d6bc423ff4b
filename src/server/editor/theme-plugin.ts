import path from 'node:path';
import type { Theme } from './theme.js';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s !== '') : typeof v === 'string' && v ? [v] : []);

/** The plugin type Node-RED's editor-api looks `editorTheme.theme` up in. */
export const THEME_PLUGIN_TYPE = 'node-red-theme';

/** What the theme needs from the registry: a plugin by id, and the ids of the installed themes. */
export interface ThemePlugins {
  getPlugin(id: string): Obj | undefined;
  themeIds(): string[];
}

/**
 * The editor's theme as it is now: `editorTheme` with the theme plugin it names (`editorTheme.theme`)
 * applied, as Node-RED 5's editor-api does. Plugins register after the server is built and may be
 * installed or removed later, so the plugin is looked up on each call; the merged theme is kept
 * while the plugin stays the same object, so the page renders once per theme.
 */
export function activeTheme(base: Theme, name: unknown, plugins: ThemePlugins): () => Theme {
  let applied: { plugin: Obj | undefined; ids: string; theme: Theme } | undefined;
  return () => {
    const plugin = typeof name === 'string' && name ? plugins.getPlugin(name) : undefined;
    const ids = plugins.themeIds();
    const key = ids.join('\n');
    if (applied && applied.plugin === plugin && applied.ids === key) return applied.theme;
    const themed = plugin && plugin.type === THEME_PLUGIN_TYPE ? withThemePlugin(base, plugin) : base;
    applied = { plugin, ids: key, theme: { ...themed, context: { ...themed.context, themes: ids } } };
    return applied.theme;
  };
}

/**
 * Node-RED 5.0.7's theme plugin fields on top of the user's `editorTheme`: its css and scripts come
 * first, its page and header replace the defaults, its menu is merged, its help, palette theme and
 * categories and `schemes` (light and/or dark: a single one is forced on the editor) are passed to
 * the editor, and its Monaco options and mermaid settings sit under the user's. Its files are
 * served from the plugin module's folder, and only from there.
 */
function withThemePlugin(base: Theme, plugin: Obj): Theme {
  const dir = typeof plugin.path === 'string' ? path.resolve(plugin.path) : undefined;
  const files = new Map(base.files);
  const serve = (kind: string, file: string): string | undefined => {
    if (!dir) return undefined;
    const absolute = path.resolve(dir, file);
    if (!absolute.startsWith(dir + path.sep)) return undefined;
    const url = `theme/${kind}/${encodeURIComponent(path.basename(absolute))}`;
    files.set(url, absolute);
    return url;
  };
  const served = (kind: string, list: unknown) => strings(list).flatMap((f) => serve(kind, f) ?? []);

  const page = { ...base.context.page, tabicon: { ...base.context.page.tabicon } };
  const header = { ...base.context.header };
  const css = served('css', plugin.css);
  if (css.length) page.css = [...css, ...(page.css ?? [])];
  const scripts = served('scripts', plugin.scripts);
  if (scripts.length) page.scripts = [...scripts, ...(page.scripts ?? [])];
  if (isObject(plugin.page)) {
    const favicon = served('favicon', plugin.page.favicon)[0];
    if (favicon) page.favicon = favicon;
    const tabicon = isObject(plugin.page.tabicon) ? served('page', plugin.page.tabicon.icon)[0] : undefined;
    if (tabicon) page.tabicon.icon = tabicon;
    if (typeof plugin.page.title === 'string' && plugin.page.title) page.title = plugin.page.title;
  }
  if (isObject(plugin.header)) {
    if (plugin.header.image === false) header.image = '';
    else {
      const image = served('header', plugin.header.image)[0];
      if (image) header.image = image;
    }
    if (typeof plugin.header.title === 'string') header.title = plugin.header.title;
    if (typeof plugin.header.url === 'string') header.url = plugin.header.url;
  }

  const settings: Obj = { ...base.settings };
  if (isObject(plugin.menu)) settings.menu = { ...(isObject(settings.menu) ? settings.menu : {}), ...plugin.menu };
  if (plugin.help !== undefined) settings.help = plugin.help;
  const palette = isObject(plugin.palette) ? plugin.palette : {};
  if (Array.isArray(palette.theme)) {
    // A palette rule's icon without a module is one of the theme module's icons.
    const rules = palette.theme.map((rule: unknown) =>
      isObject(rule) && typeof rule.icon === 'string' && !rule.icon.includes('/') ? { ...rule, icon: `${String(plugin.module)}/${rule.icon}` } : rule,
    );
    settings.palette = { ...(isObject(settings.palette) ? settings.palette : {}), theme: rules };
  }
  // A list of category names (before Node-RED 4.1.11) or {order, descriptions, nodeOverrides}.
  const categories = Array.isArray(palette.categories)
    ? { order: palette.categories }
    : isObject(palette.categories)
      ? {
          order: Array.isArray(palette.categories.order) ? palette.categories.order : undefined,
          descriptions: isObject(palette.categories.descriptions) ? palette.categories.descriptions : undefined,
          nodeOverrides: isObject(palette.categories.nodeOverrides) ? palette.categories.nodeOverrides : undefined,
        }
      : undefined;
  if (categories) settings.palette = { ...(isObject(settings.palette) ? settings.palette : {}), categories };
  const schemes = Array.isArray(plugin.schemes) ? plugin.schemes.filter((s) => s === 'light' || s === 'dark') : [];
  if (schemes.length) settings.schemes = schemes;
  if (isObject(plugin.mermaid)) settings.mermaid = { ...plugin.mermaid, ...(isObject(settings.mermaid) ? settings.mermaid : {}) };

  const userOptions = isObject(base.codeEditor?.options) ? base.codeEditor.options : {};
  const codeEditor = { ...base.codeEditor, options: { ...(isObject(plugin.monacoOptions) ? plugin.monacoOptions : {}), ...userOptions } };
  return { context: { ...base.context, page, header }, settings, codeEditor, files };
}
