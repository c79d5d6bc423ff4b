import { access, constants, cp, mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { CredentialCipher, encryptNodeRedBlob } from '../credentials/cipher.js';
import { isEncrypted, readCredentialKey, secretNeeded, type CredentialKey } from '../credentials/key.js';
import type { Logger } from '../base/log.js';
import type { Settings } from '../settings/settings.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import { flowsFileText, userDirCredentialsPath } from '../storage/file/flow-pair.js';
import { createStorage, storedCredentialsName } from '../storage/index.js';
import type { CredentialMap, FlowsSnapshot, Storage } from '../storage/contract.js';
import { exportNodeModules, exportNodeSetFlags } from './node-modules.js';

/**
 * `runnel export --format node-red`: the flows and credentials read through the Storage interface
 * (file or PostgreSQL) and written the way Node-RED 4 reads them — the flows file, the credentials
 * as `{"$": AES-256-CTR blob}` under the key Node-RED will try, the generated key in
 * `.config.runtime.json` when there is one, and the file context stores. Without `--out` the user
 * dir itself is rewritten (only its credentials file changes: Runnel keeps the rest in Node-RED's
 * layout already).
 */

export class ExportError extends Error {}

export interface ExportSummary {
  dir: string;
  nodes: number;
  /** Nodes whose credentials were exported. */
  credentials: number;
  /** Files and folders written, relative to `dir`. */
  written: string[];
  /** What the user has to do for Node-RED to read the credentials, when something is left. */
  notes: string[];
  /** The node modules listed in the folder's package.json, for `npm install` there. */
  modules: string[];
}

const SYSTEM_KEY = '_credentialSecret';
const RUNTIME_FILE = '.config.runtime.json';
const SECRET_FILE_MODE = 0o600;
const SESSIONS_FILE = '.sessions.json';

export async function exportNodeRed(settings: Settings, outDir: string | undefined, log: Logger): Promise<ExportSummary> {
  if (settings.storage.type === 'file' && !(await isDirectory(settings.userDir))) {
    throw new ExportError(`the user dir ${settings.userDir} does not exist: name it with --user-dir (or --settings)`);
  }
  const storage = await openStorage(settings, log);
  try {
    const snapshot = await storage.getFlows();
    const key = await readCredentialKey(settings, storage);
    const credentials = await decrypt(snapshot, key, storedCredentialsName(settings));
    const dir = path.resolve(outDir ?? settings.userDir);
    await writableDir(dir);
    const inPlace = dir === settings.userDir && settings.storage.type === 'file' && !settings.storageModule;
    return await write({ settings, snapshot, key, credentials, dir, inPlace });
  } finally {
    await storage.close();
  }
}

async function openStorage(settings: Settings, log: Logger): Promise<Storage> {
  let storage: Storage | undefined;
  try {
    storage = await createStorage(settings, log);
    await storage.init();
    return storage;
  } catch (e) {
    await storage?.close().catch(() => undefined);
    throw new ExportError(`cannot read the storage: ${(e as Error).message.split('\n')[0]}`);
  }
}

async function decrypt(snapshot: FlowsSnapshot, key: CredentialKey | undefined, where: string): Promise<CredentialMap> {
  const doc = snapshot.credentials;
  if (doc === null) return {};
  if (key === undefined && isEncrypted(doc)) throw new ExportError(secretNeeded('none', where));
  try {
    return (await new CredentialCipher(key?.secret, key?.legacySecrets ?? []).decrypt(doc)).map;
  } catch {
    throw new ExportError(secretNeeded(key?.type ?? 'none', where));
  }
}

interface Plan {
  settings: Settings;
  snapshot: FlowsSnapshot;
  key: CredentialKey | undefined;
  credentials: CredentialMap;
  dir: string;
  inPlace: boolean;
}

async function write(plan: Plan): Promise<ExportSummary> {
  const { settings, snapshot, key, credentials, dir, inPlace } = plan;
  const written: string[] = [];
  const notes: string[] = [];
  const flowsPath = flowsPathIn(dir, settings, inPlace);
  const runtimePath = path.join(dir, RUNTIME_FILE);
  const runtime = await readJsonObject(runtimePath);
  // Node-RED decrypts with a generated key whenever .config.runtime.json holds one (then moves to
  // credentialSecret, if set): the credentials go under the key it will try first.
  let secret = typeof runtime[SYSTEM_KEY] === 'string' && runtime[SYSTEM_KEY] !== '' ? (runtime[SYSTEM_KEY] as string) : undefined;
  if (key?.type === 'system' && secret !== key.secret) {
    secret = key.secret;
    await writeFileAtomic(runtimePath, JSON.stringify({ ...runtime, [SYSTEM_KEY]: secret }, null, 4), { backup: true, mode: SECRET_FILE_MODE });
    written.push(RUNTIME_FILE);
  }
  // Whatever the key: the settings.js carries adminAuth, contextStorage and the rest.
  const copied = await copyUserDirSettings(settings, dir, inPlace);
  if (copied) written.push('settings.js');
  if (key?.type === 'user' && secret === undefined) {
    secret = key.secret;
    if (!copied && (!inPlace || settings.settingsFile !== path.join(settings.userDir, 'settings.js'))) {
      notes.push(`Node-RED needs the same credentialSecret: set it in its settings.js as in ${settings.settingsFile ?? 'the settings'}`);
    }
  }
  if (!inPlace) {
    await mkdir(path.dirname(flowsPath), { recursive: true });
    await writeFileAtomic(flowsPath, flowsFileText(snapshot.flows, settings.flowFilePretty), { backup: true });
    written.push(path.relative(dir, flowsPath));
  }
  const ids = Object.keys(credentials);
  // In the user dir: Node-RED 4 reads them nowhere else, Node-RED 5 there first.
  const credsPath = userDirCredentialsPath(dir, flowsPath);
  const doc = secret === undefined ? credentials : { $: encryptNodeRedBlob(credentials, secret) };
  await writeFileAtomic(credsPath, settings.flowFilePretty ? JSON.stringify(doc, null, 4) : JSON.stringify(doc), { backup: true, mode: SECRET_FILE_MODE });
  written.push(path.relative(dir, credsPath));
  if (inPlace && (await resetRunnelSessions(dir))) written.push(SESSIONS_FILE);
  if (!inPlace) written.push(...(await copyFileContext(settings, dir, notes)));
  // In place the modules are in the user dir's node_modules already, where Node-RED loads them.
  const modules = inPlace ? [] : await exportNodeModules(settings.userDir, dir);
  if (modules.length > 0) written.push('package.json');
  const flags = inPlace ? undefined : await exportNodeSetFlags(settings.userDir, dir);
  if (flags) written.push(flags);
  return { dir, nodes: snapshot.flows.length, credentials: ids.length, written, notes, modules };
}

/**
 * Where the flows file goes. In place it is the one the storage reads (flowFile may name a
 * subfolder): its credentials file is the one Node-RED opens. In another folder the same relative
 * path, as the user dir's settings.js copied there names it; a flowFile outside the user dir keeps
 * only its name, so nothing is written outside the folder.
 */
function flowsPathIn(dir: string, settings: Settings, inPlace: boolean): string {
  const own = path.resolve(settings.userDir, settings.flowFile);
  if (inPlace) return own;
  const relative = path.relative(settings.userDir, own);
  const inside = relative !== '' && relative.split(path.sep)[0] !== '..' && !path.isAbsolute(relative);
  return path.join(dir, inside ? relative : path.basename(own));
}

/** Outside the user dir, Node-RED reads its own settings.js: the user dir's goes along when it is the one in use. */
async function copyUserDirSettings(settings: Settings, dir: string, inPlace: boolean): Promise<boolean> {
  const own = path.join(settings.userDir, 'settings.js');
  if (inPlace || settings.settingsFile !== own) return false;
  await writeFileAtomic(path.join(dir, 'settings.js'), await readFile(own, 'utf8'), { backup: true, mode: SECRET_FILE_MODE });
  return true;
}

/**
 * The localfilesystem stores kept in the user dir (Node-RED's layout, `<base>/<scope>/<flow>.json`)
 * are copied; a store with its own `dir` stays where both systems read it.
 */
async function copyFileContext(settings: Settings, dir: string, notes: string[]): Promise<string[]> {
  const copied: string[] = [];
  for (const [name, store] of Object.entries(settings.contextStorage ?? {})) {
    if (typeof store === 'string') continue;
    if (store.module !== 'localfilesystem') {
      if (store.module !== 'memory') notes.push(`context store ${name} (${typeof store.module === 'string' ? store.module : 'a module'}) is not exported`);
      continue;
    }
    const config = store.config ?? {};
    if (typeof config.dir === 'string' && path.resolve(config.dir) !== settings.userDir) continue;
    const base = typeof config.base === 'string' ? config.base : 'context';
    const from = path.join(settings.userDir, base);
    if (copied.includes(base) || !(await isDirectory(from))) continue;
    await cp(from, path.join(dir, base), { recursive: true });
    copied.push(base);
  }
  return copied.map((base) => `${base}/`);
}

/**
 * Runnel's sessions are a list where Node-RED keeps an object by token; given the list, Node-RED
 * would never save a session of its own. Node-RED starts with none (everyone logs in again).
 */
async function resetRunnelSessions(dir: string): Promise<boolean> {
  const file = path.join(dir, SESSIONS_FILE);
  let sessions: unknown;
  try {
    sessions = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return false;
  }
  if (!Array.isArray(sessions)) return false;
  await writeFileAtomic(file, '{}', { backup: true, mode: SECRET_FILE_MODE });
  return true;
}

async function readJsonObject(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ExportError(`cannot read ${file}: ${(e as Error).message}`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new ExportError(`${file} is not a JSON object: fix or remove it`);
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

async function writableDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (e) {
    throw new ExportError(`cannot write to ${dir}: ${(e as Error).message.split('\n')[0]}`);
  }
}
