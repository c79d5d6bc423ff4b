import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../base/log.js';
import type { Settings } from '../settings/settings.js';
import { createFileStorage } from './file/file-storage.js';
import { credentialsPathIn } from './file/flow-pair.js';
import { resolveInstanceId } from './instance-id.js';
import type { Storage } from './contract.js';

/** The backend the `storage` setting selects. PostgreSQL's client is loaded only when it is used. */
export async function createStorage(settings: Settings, log: Logger): Promise<Storage> {
  const config = settings.storage;
  if (config.type === 'postgres') {
    // The user dir still holds what each instance keeps for itself: node modules, its id, files.
    await mkdir(settings.userDir, { recursive: true });
    const { createPostgresStorage } = await import('./postgres/postgres-storage.js');
    return createPostgresStorage(config, await resolveInstanceId(settings), log, settings.flowHistory.max);
  }
  if (settings.storageModule) {
    const { createModuleStorage } = await import('./node-red-module/module-storage.js');
    return createModuleStorage({ module: settings.storageModule, userDir: settings.userDir, moduleSettings: moduleSettings(settings), historyMax: settings.flowHistory.max }, log);
  }
  return createFileStorage(settings, log);
}

/**
 * The settings a Node-RED storage module reads in `init(settings)`: the user dir and flows file as
 * Node-RED resolved them, and the settings file's other keys (a module's own, such as its URL).
 */
function moduleSettings(settings: Settings): Record<string, unknown> {
  return {
    ...settings.extra,
    userDir: settings.userDir,
    flowFile: settings.flowFile,
    flowFilePretty: settings.flowFilePretty,
    editorTheme: settings.editorTheme,
  };
}

/** How messages name the stored credentials: the file a Node-RED user knows, or the database. */
export function storedCredentialsName(settings: Pick<Settings, 'storage' | 'storageModule' | 'userDir' | 'flowFile'>): string {
  if (settings.storageModule) return 'the credentials the storage module (storageModule) keeps';
  if (settings.storage.type !== 'file') return 'the credentials in the database';
  return `the credentials in ${credentialsPathIn(settings.userDir, path.resolve(settings.userDir, settings.flowFile))}`;
}
