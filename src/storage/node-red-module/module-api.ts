import type { NodeRedStorageModule } from '../../settings/storage-module.js';

/** The optional pairs of Node-RED's storage API: Node-RED uses one only when the module has both functions. */
export type OptionalPair = ['getSettings', 'saveSettings'] | ['getSessions', 'saveSessions'] | ['getLibraryEntry', 'saveLibraryEntry'];

/** Whether the module has both functions of an optional pair (as Node-RED checks with hasOwnProperty). */
export function hasPair(module: NodeRedStorageModule, pair: OptionalPair): boolean {
  return pair.every((name) => typeof module[name] === 'function');
}
