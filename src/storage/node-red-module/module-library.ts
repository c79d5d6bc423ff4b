import { RunnelError } from '../../base/errors.js';
import { LibraryFiles, type LibraryListing } from '../file/library-files.js';
import type { NodeRedStorageModule } from '../../settings/storage-module.js';
import { hasPair } from './module-api.js';

/**
 * The editor's library through the module's getLibraryEntry/saveLibraryEntry, with the checks
 * Runnel's own library makes first (a module is handed no `..` path, as Node-RED guarantees). A
 * module without the pair has the library kept in the user dir, in Node-RED's layout.
 */
export interface LibraryPlace {
  get(type: string, entry: string): Promise<string | LibraryListing>;
  save(type: string, entry: string, meta: Record<string, unknown>, body: string): Promise<void>;
}

export function libraryPlace(module: NodeRedStorageModule, userDir: string): LibraryPlace {
  if (!hasPair(module, ['getLibraryEntry', 'saveLibraryEntry'])) return new LibraryFiles(userDir);
  return {
    get: async (type, entry) => {
      check(type, entry);
      const found = await module.getLibraryEntry!(type, entry).catch(notFound);
      if (typeof found === 'string' || Array.isArray(found)) return structuredClone(found as string | LibraryListing);
      throw new RunnelError('not_found', 'No such library entry');
    },
    save: async (type, entry, meta, body) => {
      check(type, entry);
      if (entry === '' || entry.endsWith('/')) throw new RunnelError('invalid_request', 'A library entry needs a file name');
      await module.saveLibraryEntry!(type, entry, structuredClone(meta), body);
    },
  };
}

function check(type: string, entry: string): void {
  if (!/^[\w-]+$/.test(type)) throw new RunnelError('invalid_request', 'A library type is letters, digits, _ and -');
  if (entry.split(/[/\\]/).includes('..')) throw new RunnelError('not_found', 'No such library entry');
}

/** Node-RED's file library rejects a missing entry with the file system's ENOENT. */
function notFound(e: unknown): never {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'ENOENT' || code === 'not_found') throw new RunnelError('not_found', 'No such library entry');
  throw e;
}
