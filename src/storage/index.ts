import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../base/log.js';
import type { Settings } from '../settings/settings.js';
import { createFileStorage } from './file/file-storage.js';
import { credentialsPathFor } from './file/flow-pair.js';
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
  return createFileStorage(settings, log);
}

/** How messages name the stored credentials: the file a Node-RED user knows, or the database. */
export function storedCredentialsName(settings: Pick<Settings, 'storage' | 'userDir' | 'flowFile'>): string {
  if (settings.storage.type !== 'file') return 'the credentials in the database';
  return `the credentials in ${credentialsPathFor(path.resolve(settings.userDir, settings.flowFile))}`;
}
