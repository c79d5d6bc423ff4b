import { mkdir } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { Settings } from '../settings.js';
import { createFileStorage } from './file-storage.js';
import { resolveInstanceId } from './instance-id.js';
import type { Storage } from './types.js';

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
