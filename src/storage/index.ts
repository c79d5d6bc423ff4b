import type { Logger } from '../log.js';
import type { Settings } from '../settings.js';
import { createFileStorage } from './file-storage.js';
import type { Storage } from './types.js';

/** The backend the `storage` setting selects. */
export function createStorage(settings: Settings, log: Logger): Storage {
  switch (settings.storage.type) {
    case 'file':
      return createFileStorage(settings, log);
  }
}
