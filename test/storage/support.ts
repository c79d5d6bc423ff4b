import { readdir, readFile } from 'node:fs/promises';
import { resolveSettings, type Settings } from '../../src/settings/settings.js';

export function settingsFor(userDir: string, extra: Record<string, unknown> = {}): Settings {
  return resolveSettings({ userDir, ...extra });
}

export async function readJsonFile(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

export async function tempFilesIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.runnel-tmp'));
}
