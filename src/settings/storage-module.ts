/**
 * Node-RED's storage module API (`storageModule` in settings.js), as @node-red/runtime's
 * storage/index.js calls it: `init(settings, runtime)`, the flows and the credentials as two
 * documents, and optionally the runtime settings, the sessions and the library (each pair used
 * only when the module has both functions). src/storage/node-red-module/ adapts it to Runnel's
 * Storage contract.
 */
export interface NodeRedStorageModule {
  init(settings: Record<string, unknown>, runtime: Record<string, unknown>): unknown;
  getFlows(): Promise<unknown>;
  saveFlows(flows: unknown[], user?: unknown): Promise<unknown>;
  getCredentials(): Promise<unknown>;
  saveCredentials(credentials: unknown): Promise<unknown>;
  getSettings?(): Promise<unknown>;
  saveSettings?(settings: Record<string, unknown>): Promise<unknown>;
  getSessions?(): Promise<unknown>;
  saveSessions?(sessions: unknown): Promise<unknown>;
  getLibraryEntry?(type: string, path: string): Promise<unknown>;
  saveLibraryEntry?(type: string, path: string, meta: Record<string, unknown>, body: string): Promise<unknown>;
}

const REQUIRED = ['init', 'getFlows', 'saveFlows', 'getCredentials', 'saveCredentials'] as const;
/** What is wrong with a `storageModule` value, or undefined when it has Node-RED's storage API. */
export function storageModuleProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'must be a storage module object (require it in a .js settings file)';
  const missing = REQUIRED.filter((name) => typeof (value as Record<string, unknown>)[name] !== 'function');
  if (missing.length > 0) return `lacks ${missing.join(', ')}: a storage module has init, getFlows, saveFlows, getCredentials and saveCredentials`;
  return undefined;
}
