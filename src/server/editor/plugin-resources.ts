import { readFile } from 'node:fs/promises';
import type { PluginSetInfo } from '../../registry/registry.js';
import { readCatalog } from './node-resources.js';

/*
 * What the editor loads of plugin sets (`node-red.plugins`), as Node-RED 4.1 serves it: their
 * editor templates (GET /plugins as HTML, GET /plugins/:module/:set) and their message catalogs
 * (GET /plugins/messages), read beside each set's code or template as Node-RED's loader does.
 */

/** Node-RED's `<!-- --- [red-plugin:<id>] --- -->` block of one set, or '' when it is disabled, failed or has no template. */
export async function pluginHtml(set: PluginSetInfo): Promise<string> {
  if (!set.enabled || set.err || !set.template) return '';
  const content = await readFile(set.template, 'utf8').catch(() => undefined);
  return content === undefined ? '' : `\n<!-- --- [red-plugin:${set.id}] --- -->\n${content}`;
}

export async function allPluginHtml(sets: PluginSetInfo[]): Promise<string> {
  return (await Promise.all(sets.map(pluginHtml))).join('');
}

/** Every plugin set's catalog under its set id; `{}` for a set without one, as Node-RED answers. */
export async function pluginCatalogs(sets: PluginSetInfo[], lang: string): Promise<Record<string, unknown>> {
  const catalogs = await Promise.all(sets.map(async (set) => (set.catalog ? await readCatalog(set.catalog.dir, set.catalog.base, lang) : undefined)));
  return Object.fromEntries(sets.map((set, i) => [set.id, catalogs[i] ?? {}]));
}
