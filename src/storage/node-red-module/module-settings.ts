import path from 'node:path';
import { readTextIfExists, writeFileAtomic } from '../atomic-file.js';
import type { NodeRedStorageModule } from '../../settings/storage-module.js';
import { hasPair } from './module-api.js';

/**
 * Node-RED's runtime settings document (getSettings/saveSettings): the runtime's own keys
 * (`_credentialSecret`, `instanceId`, ...) at the top level, the editor's per-user settings under
 * `users`. A module without the pair has them kept in the user dir in Node-RED's two files
 * instead, so a generated credential key survives a restart (Node-RED would lose it).
 */

export type SettingsDoc = Record<string, unknown>;

const SECRET_FILE_MODE = 0o600;

export interface SettingsPlace {
  read(): Promise<SettingsDoc>;
  write(doc: SettingsDoc): Promise<void>;
}

export function settingsPlace(module: NodeRedStorageModule, userDir: string): SettingsPlace {
  if (hasPair(module, ['getSettings', 'saveSettings'])) {
    return {
      read: async () => {
        const doc = await module.getSettings!();
        return isPlainObject(doc) ? structuredClone(doc) : {};
      },
      write: async (doc) => {
        await module.saveSettings!(structuredClone(doc));
      },
    };
  }
  return localSettings(userDir);
}

function localSettings(userDir: string): SettingsPlace {
  const runtimeFile = path.join(userDir, '.config.runtime.json');
  const usersFile = path.join(userDir, '.config.users.json');
  const readObject = async (file: string) => {
    const text = await readTextIfExists(file);
    const value: unknown = text === undefined ? {} : JSON.parse(text);
    return isPlainObject(value) ? value : {};
  };
  return {
    read: async () => {
      const users = await readObject(usersFile);
      return { ...(await readObject(runtimeFile)), ...(Object.keys(users).length > 0 ? { users } : {}) };
    },
    write: async (doc) => {
      const { users, ...runtime } = doc;
      await writeFileAtomic(usersFile, JSON.stringify(users ?? {}, null, 4), { backup: true });
      await writeFileAtomic(runtimeFile, JSON.stringify(runtime, null, 4), { backup: true, mode: SECRET_FILE_MODE });
    },
  };
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
