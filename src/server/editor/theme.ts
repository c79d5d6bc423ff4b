import path from 'node:path';

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string' && s !== '') : typeof v === 'string' && v ? [v] : []);

/** What index.mst is rendered with, and what GET /theme answers. */
export interface ThemeContext {
  page: { title: string; favicon: string; tabicon: { icon: string; colour: string }; css?: string[]; scripts?: string[] };
  header: { title: string; image: string; url?: string };
  asset: { red: string; main: string; vendorMonaco: string; vendorAce: string };
  login?: { image?: string; message?: string; button?: unknown };
  [key: string]: unknown;
}

export interface Theme {
  context: ThemeContext;
  /** `editorTheme` as the editor reads it from GET /settings (palette, projects, tours, menu, ...). */
  settings: Obj;
  /** The code editor choice, top-level `codeEditor` in GET /settings. */
  codeEditor: Obj | undefined;
  /** User files the context links to, by URL (relative to the admin root). */
  files: Map<string, string>;
}

/**
 * Node-RED 5's editor theme from `editorTheme`: page title, favicon, tab icon, extra css and scripts,
 * header title, image and link, login image, message and button, the code editor's bootstrap script
 * (Monaco unless `codeEditor.lib` is `ace`, none for `basic`), and the flags the editor reads from
 * /settings (palette, projects, tours, menu, ...). The user's own files are served from their paths
 * under `theme/...`, as Node-RED does. Page and header say Runnel unless the user's theme names
 * them, so a screenshot shows which runtime the editor talks to.
 */
export function buildTheme(editorTheme: unknown, baseDir: string): Theme {
  const theme = isObject(editorTheme) ? editorTheme : {};
  const files = new Map<string, string>();
  const serve = (kind: string, file: string): string => {
    const absolute = path.resolve(baseDir, file);
    const url = `theme/${kind}/${encodeURIComponent(path.basename(absolute))}`;
    files.set(url, absolute);
    return url;
  };

  const codeEditor = isObject(theme.codeEditor) ? theme.codeEditor : undefined;
  const lib = codeEditor?.lib ?? 'monaco';
  const context: ThemeContext = {
    page: { title: 'Runnel', favicon: 'favicon.ico', tabicon: { icon: 'red/images/node-red-icon-black.svg', colour: '#8f0000' } },
    header: { title: 'Runnel', image: 'red/images/node-red-icon.svg' },
    asset: {
      red: 'red/red.min.js',
      main: 'red/main.min.js',
      vendorMonaco: lib === 'monaco' ? 'vendor/monaco/monaco-bootstrap.js' : '',
      vendorAce: lib === 'ace' ? 'vendor/ace/ace-bootstrap.js' : '',
    },
  };

  if (isObject(theme.page)) {
    const page = theme.page;
    if (str(page.title)) context.page.title = page.title as string;
    if (str(page.favicon)) context.page.favicon = serve('favicon', page.favicon as string);
    const tabicon = page.tabicon;
    if (str(tabicon)) context.page.tabicon.icon = serve('tabicon', tabicon as string);
    else if (isObject(tabicon)) {
      if (str(tabicon.icon)) context.page.tabicon.icon = serve('tabicon', tabicon.icon as string);
      if (str(tabicon.colour)) context.page.tabicon.colour = tabicon.colour as string;
    }
    const css = strings(page.css).map((f) => serve('css', f));
    if (css.length) context.page.css = css;
    const scripts = strings(page.scripts).map((f) => serve('scripts', f));
    if (scripts.length) context.page.scripts = scripts;
  }
  if (isObject(theme.header)) {
    const header = theme.header;
    if (typeof header.title === 'string') context.header.title = header.title;
    if (header.image === null || header.image === false) context.header.image = '';
    else if (str(header.image)) context.header.image = serve('header', header.image as string);
    if (str(header.url)) context.header.url = header.url as string;
  }
  if (isObject(theme.login)) {
    const login: NonNullable<ThemeContext['login']> = {};
    if (str(theme.login.image)) login.image = serve('login', theme.login.image as string);
    if (str(theme.login.message)) login.message = theme.login.message as string;
    if (theme.login.button) login.button = theme.login.button;
    if (Object.keys(login).length) context.login = login;
  }

  const settings: Obj = {};
  for (const key of ['deployButton', 'menu', 'userMenu', 'palette', 'projects', 'tours', 'keymap', 'mermaid', 'multiplayer', 'help', 'languages', 'theme', 'logout']) {
    if (theme[key] !== undefined) settings[key] = theme[key];
  }
  // The editor reads palette.categories.order; Node-RED accepts a plain list and wraps it.
  if (isObject(theme.palette) && Array.isArray(theme.palette.categories)) settings.palette = { ...theme.palette, categories: { order: theme.palette.categories } };
  // Node-RED's: the editor offers Projects only when they are switched on, manual commits by default.
  const projects = isObject(theme.projects) ? theme.projects : {};
  settings.projects = projects.enabled === true
    ? { ...projects, workflow: { mode: isObject(projects.workflow) && projects.workflow.mode === 'auto' ? 'auto' : 'manual' } }
    : { ...projects, enabled: false };
  return { context, settings, codeEditor, files };
}
