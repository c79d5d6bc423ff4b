import { readdir, readFile } from 'node:fs/promises';
import { resolveSettings, type Settings } from '../../src/settings.js';

// The storage suites are being reworked into a backend-agnostic contract; until that lands they keep
// these names, served by the shared helpers rather than copies.
export { captureLog } from '../helpers/log.js';
export { removeDir, tempDir as makeTempDir } from '../helpers/dirs.js';

export function settingsFor(userDir: string, extra: Record<string, unknown> = {}): Settings {
  return resolveSettings({ userDir, ...extra });
}

export async function readJsonFile(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

export async function tempFilesIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.runnel-tmp'));
}
