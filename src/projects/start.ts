import { SettingsError, type Settings } from '../settings/settings.js';
import type { Storage } from '../storage/contract.js';
import type { CredentialKey } from '../credentials/key.js';
import { Projects } from './projects.js';

/** Projects are on when the editor theme asks for them, as in Node-RED. */
function projectsEnabled(settings: Pick<Settings, 'editorTheme'>): boolean {
  const projects = settings.editorTheme.projects as { enabled?: unknown } | undefined;
  return projects?.enabled === true;
}

/**
 * Opens the projects folder when Projects are on and points storage at the active project's files
 * before anything reads the flows. With shared storage the flows stay in the database and the
 * projects folder holds working clones of the repositories stored there (src/runtime/api/projects-cluster.ts).
 */
export async function openProjects(settings: Settings, storage: Storage): Promise<Projects | undefined> {
  if (!projectsEnabled(settings)) return undefined;
  if (storage.useFlowFiles === undefined && storage.shared === undefined) throw new SettingsError('editorTheme.projects.enabled needs the file storage or a shared database');
  const { path, maxCloneSize } = settings.editorTheme.projects as { path?: unknown; maxCloneSize?: unknown };
  if (maxCloneSize !== undefined && !(typeof maxCloneSize === 'number' && Number.isFinite(maxCloneSize) && maxCloneSize > 0)) {
    throw new SettingsError('editorTheme.projects.maxCloneSize is a number of bytes greater than 0');
  }
  const projects = new Projects(settings.userDir, typeof path === 'string' ? path : undefined, maxCloneSize);
  await projects.init();
  const paths = await projects.flowPaths();
  if (paths !== undefined) await storage.useFlowFiles?.(paths);
  return projects;
}

/**
 * The active project's key (Node-RED's: its credentialSecret, or none for credentials in clear);
 * undefined without one. The file is written in Node-RED's format: it is committed, and a clone
 * or pull must open in Node-RED as well.
 */
export function projectKey(projects: Projects): CredentialKey | undefined {
  return projects.active === undefined ? undefined : projectKeyFor(projects.activeSecret());
}

/** A project's key from its credential secret (false: credentials in clear); the cluster's working clones use it too. */
export function projectKeyFor(secret: string | false): CredentialKey {
  return secret === false ? { type: 'disabled', secret: undefined, legacySecrets: [], format: 'node-red' } : { type: 'user', secret, legacySecrets: [], format: 'node-red' };
}
