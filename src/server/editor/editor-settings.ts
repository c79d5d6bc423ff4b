import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Settings } from '../../settings/settings.js';
import type { Theme } from './theme.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The languages the editor offers: those editor-client has catalogs for. */
const LANGUAGES = readdirSync(path.join(path.dirname(createRequire(import.meta.url).resolve('@node-red/editor-client/package.json')), 'locales'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

/** The libraries the editor's import/export dialogs offer: the user dir's own and the modules' examples. */
const LIBRARIES = [
  { id: 'local', label: 'editor:library.types.local', user: false, icon: 'font-awesome/fa-hdd-o' },
  { id: 'examples', label: 'editor:library.types.examples', user: false, icon: 'font-awesome/fa-life-ring', types: ['flows'], readOnly: true },
];

/**
 * The keys of GET /settings only the editor reads, with Node-RED's names and defaults: the theme
 * flags, the code and markdown editors, libraries, palette categories, node defaults, runtime-state
 * and diagnostics switches, and the module policies the palette manager and the function node's
 * Setup tab apply on the client side (the ones Runnel enforces, so the editor offers no install
 * that would be refused).
 */
export function editorSettings(settings: Settings, theme: Theme): Obj {
  const extra = settings.extra;
  const { palette, modules } = settings.externalModules;
  const runtimeState = isObject(extra.runtimeState) ? extra.runtimeState : {};
  const diagnostics = isObject(extra.diagnostics) ? extra.diagnostics : {};
  const body: Obj = {
    editorTheme: { languages: LANGUAGES, ...theme.settings },
    libraries: LIBRARIES,
    runtimeState: { enabled: runtimeState.enabled === true, ui: runtimeState.ui === true },
    // No UI without the endpoint, as in Node-RED.
    diagnostics: { enabled: diagnostics.enabled !== false, ui: diagnostics.enabled !== false && diagnostics.ui !== false },
    // Runnel sends nothing to Node-RED's update service: the editor must not ask to enable it.
    telemetryEnabled: false,
    functionExternalModules: settings.functionExternalModules,
    tlsConfigDisableLocalFiles: extra.tlsConfigDisableLocalFiles === true,
    externalModules: {
      autoInstall: settings.externalModules.autoInstall,
      palette: {
        allowInstall: palette.allowInstall,
        allowUpload: palette.allowInstall && palette.allowUpload,
        allowUpdate: palette.allowInstall && palette.allowUpdate,
        // The editor reads these lists as Node-RED does (a list not given means something), and
        // greys out what they refuse: only the lists given are sent.
        ...given({ allowList: palette.allowList, denyList: palette.denyList, allowUpdateList: palette.allowUpdateList, denyUpdateList: palette.denyUpdateList }),
      },
      modules: { allowInstall: modules.allowInstall, ...given({ allowList: modules.allowList, denyList: modules.denyList }) },
    },
  };
  // Node-RED 5 always says which code editor to load (Monaco unless the theme names another).
  body.codeEditor = { ...theme.codeEditor, lib: theme.codeEditor?.lib || 'monaco', options: theme.codeEditor?.options || {} };
  const { markdownEditor } = settings.editorTheme;
  const { mermaid } = theme.settings;
  if (markdownEditor) body.markdownEditor = { ...(isObject(markdownEditor) ? markdownEditor : {}), mermaid: (isObject(markdownEditor) && markdownEditor.mermaid) || { enabled: true } };
  if (mermaid) body.mermaid = mermaid;
  if (Array.isArray(extra.paletteCategories)) body.paletteCategories = extra.paletteCategories;
  if (extra.nodeDefaults) body.nodeDefaults = extra.nodeDefaults;
  if (typeof extra.debugMaxLength === 'number') body.debugMaxLength = extra.debugMaxLength;
  return body;
}

function given(lists: Record<string, string[] | undefined>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(lists).filter((e): e is [string, string[]] => e[1] !== undefined));
}
