import { FileQueueStore } from '../file/file-queues.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../../base/errors.js';
import type { Logger } from '../../base/log.js';
import { SerialQueue } from '../../base/serial-queue.js';
import { FileHistory, type StoredPair } from '../file/file-history.js';
import { MemoryLoginFailures } from '../memory-login-failures.js';
import { hashJson } from '../rev.js';
import type {
  FlowNodeConfig, FlowsSnapshot, Revision, RevisionInfo, RevisionMeta, RuntimeConfig, SaveFlowsRequest, SessionRecord, Storage, StoredCredentials,
} from '../contract.js';
import type { NodeRedStorageModule } from '../../settings/storage-module.js';
import { hasPair } from './module-api.js';
import { libraryPlace, type LibraryPlace } from './module-library.js';
import { isPlainObject, settingsPlace, type SettingsDoc, type SettingsPlace } from './module-settings.js';

/**
 * Runnel's Storage over a Node-RED storage module (`storageModule` in settings.js). The module
 * keeps what its API covers: the flows, the credentials document (Runnel's, opaque to it), the
 * runtime settings with the editor's per-user settings under `users`, the sessions and the library.
 * What the API has no place for is kept beside it in the user dir: the revision history
 * (`.history/`, as the file backend keeps it) and, for a module without the optional pairs, the
 * settings and the library in Node-RED's files. Sessions of a module without getSessions live in
 * memory, as in Node-RED. A save is two calls (credentials, then flows, Node-RED's order), so
 * unlike the file backend it is not one atomic step: a crash between them is not repaired.
 */

export interface ModuleStorageOptions {
  module: NodeRedStorageModule;
  userDir: string;
  /** What `init(settings, runtime)` hands the module: Node-RED's settings keys. */
  moduleSettings: Record<string, unknown>;
  historyMax: number;
}

export function createModuleStorage(options: ModuleStorageOptions, log: Logger): Storage {
  return new ModuleStorage(options, log.child({ module: 'storage' }));
}

interface Pair {
  flows: FlowNodeConfig[];
  flowsJson: string;
  rev: string;
  credentials: StoredCredentials | null;
}

class ModuleStorage implements Storage {
  readonly loginFailures = new MemoryLoginFailures();
  /** A storage module keeps flows; queues stay on this instance's disk, as with the file backend. */
  readonly queues: FileQueueStore;
  private readonly queue = new SerialQueue();
  private readonly module: NodeRedStorageModule;
  private readonly history: FileHistory;
  private readonly settings: SettingsPlace;
  private readonly library: LibraryPlace;
  private readonly moduleHasSessions: boolean;
  private memorySessions: SessionRecord[] = [];
  private closed = false;

  constructor(private readonly options: ModuleStorageOptions, private readonly log: Logger) {
    this.module = options.module;
    this.history = new FileHistory(path.join(options.userDir, '.history'), options.historyMax, log);
    this.queues = new FileQueueStore(path.join(options.userDir, '.queues'));
    this.settings = settingsPlace(this.module, options.userDir);
    this.library = libraryPlace(this.module, options.userDir);
    this.moduleHasSessions = hasPair(this.module, ['getSessions', 'saveSessions']);
  }

  async init(): Promise<void> {
    this.assertOpen();
    await mkdir(this.options.userDir, { recursive: true });
    const settings = this.options.moduleSettings;
    await this.module.init(settings, { settings, log: nodeRedLog(this.log) });
    await this.history.init();
    await this.queues.init();
    await this.queue.run(async () => {
      await this.history.reconcile(stored(await this.read()));
      await this.history.collect();
    });
  }

  getFlows(): Promise<FlowsSnapshot> {
    this.assertOpen();
    return this.queue.run(async () => {
      const pair = await this.read();
      await this.history.reconcile(stored(pair));
      return { flows: pair.flows, credentials: pair.credentials, rev: pair.rev };
    });
  }

  saveFlows(req: SaveFlowsRequest): Promise<{ rev: string }> {
    this.assertOpen();
    return this.queue.run(async () => {
      const current = await this.read();
      if (req.expectedRev !== undefined && req.expectedRev !== current.rev) {
        throw new RunnelError('version_mismatch', `The flows have changed since rev ${req.expectedRev} was read`);
      }
      const flowsJson = req.json ?? JSON.stringify(req.flows);
      const rev = req.json !== undefined && req.rev !== undefined ? req.rev : hashJson(flowsJson);
      const credentials = req.credentials === null ? current.credentials : structuredClone(req.credentials);
      if (req.revision) await this.history.append({ flows: req.flows, flowsJson, rev, credentials }, req.revision, current.rev);
      if (req.credentials !== null) await this.module.saveCredentials(structuredClone(req.credentials));
      await this.module.saveFlows(JSON.parse(flowsJson) as FlowNodeConfig[], req.revision?.user === undefined ? undefined : { username: req.revision.user });
      if (req.revision) await this.history.collect();
      return { rev };
    });
  }

  recordRevision(meta: RevisionMeta): Promise<RevisionInfo> {
    this.assertOpen();
    return this.queue.run(async () => {
      const pair = await this.read();
      const info = await this.history.append(stored(pair), meta, pair.rev);
      await this.history.collect();
      return info;
    });
  }

  listRevisions(query: { limit: number; before?: number }): Promise<RevisionInfo[]> {
    this.assertOpen();
    return this.queue.run(async () => {
      await this.history.reconcile(stored(await this.read()));
      return this.history.list(query.limit, query.before);
    });
  }

  getRevision(ref: { seq: number } | { rev: string }): Promise<Revision | undefined> {
    this.assertOpen();
    return this.queue.run(() => this.history.get(ref));
  }

  async getSessions(): Promise<SessionRecord[]> {
    this.assertOpen();
    if (!this.moduleHasSessions) return structuredClone(this.memorySessions);
    const sessions = await this.module.getSessions!();
    // Node-RED's own sessions (an object by token) are not Runnel's: their users log in again.
    return Array.isArray(sessions) ? (structuredClone(sessions) as SessionRecord[]) : [];
  }

  saveSessions(sessions: SessionRecord[]): Promise<void> {
    this.assertOpen();
    const copy = structuredClone(sessions);
    return this.queue.run(async () => {
      if (this.moduleHasSessions) await this.module.saveSessions!(copy);
      else this.memorySessions = copy;
    });
  }

  async getRuntimeConfig(): Promise<RuntimeConfig> {
    this.assertOpen();
    const { users: _users, ...runtime } = await this.settings.read();
    return runtime;
  }

  saveRuntimeConfig(config: RuntimeConfig): Promise<void> {
    this.assertOpen();
    return this.changeSettings(({ users }) => ({ ...structuredClone(config), ...(users === undefined ? {} : { users }) })).then(() => undefined);
  }

  async updateRuntimeConfig(change: (config: RuntimeConfig) => RuntimeConfig): Promise<RuntimeConfig> {
    this.assertOpen();
    const doc = await this.changeSettings(({ users, ...runtime }) => ({ ...change(runtime), ...(users === undefined ? {} : { users }) }));
    const { users: _users, ...runtime } = doc;
    return runtime;
  }

  async getUserSettings(username: string): Promise<Record<string, unknown>> {
    this.assertOpen();
    const users = (await this.settings.read()).users;
    const mine = isPlainObject(users) && Object.hasOwn(users, username) ? users[username] : undefined;
    return isPlainObject(mine) ? mine : {};
  }

  async saveUserSettings(username: string, settings: Record<string, unknown>): Promise<void> {
    this.assertOpen();
    await this.changeSettings((doc) => ({ ...doc, users: { ...(isPlainObject(doc.users) ? doc.users : {}), [username]: structuredClone(settings) } }));
  }

  getLibraryEntry(type: string, entry: string) {
    this.assertOpen();
    return this.library.get(type, entry);
  }

  saveLibraryEntry(type: string, entry: string, meta: Record<string, unknown>, body: string): Promise<void> {
    this.assertOpen();
    return this.library.save(type, entry, meta, body);
  }

  async close(): Promise<void> {
    await this.queue.drain();
    await this.queues.close();
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('storage is closed');
  }

  /** Read-modify-write of the settings document, in the queue so no concurrent change is lost. */
  private changeSettings(change: (doc: SettingsDoc) => SettingsDoc): Promise<SettingsDoc> {
    return this.queue.run(async () => {
      const next = change(await this.settings.read());
      await this.settings.write(next);
      return structuredClone(next);
    });
  }

  /** The module's flows and credentials as they are now (it may share them with others). */
  private async read(): Promise<Pair> {
    const flows = await this.module.getFlows();
    if (!Array.isArray(flows)) throw new Error(`The storage module's getFlows() gave ${typeof flows}, not an array of nodes`);
    const credentials = await this.module.getCredentials();
    const flowsJson = JSON.stringify(flows);
    return {
      flows: JSON.parse(flowsJson) as FlowNodeConfig[],
      flowsJson,
      rev: hashJson(flowsJson),
      // Node-RED's modules answer {} for no credentials; a document is kept as given, opaque.
      credentials: isPlainObject(credentials) && Object.keys(credentials).length > 0 ? structuredClone(credentials) : null,
    };
  }
}

function stored(pair: Pair): StoredPair {
  return { flows: pair.flows, flowsJson: pair.flowsJson, rev: pair.rev, credentials: pair.credentials };
}

/** The `runtime.log` a Node-RED storage module may call. */
function nodeRedLog(log: Logger): Record<string, (msg: unknown) => void> {
  const text = (msg: unknown) => (typeof msg === 'string' ? msg : msg instanceof Error ? msg.message : JSON.stringify(msg));
  return {
    fatal: (m) => log.fatal(text(m)),
    error: (m) => log.error(text(m)),
    warn: (m) => log.warn(text(m)),
    info: (m) => log.info(text(m)),
    debug: (m) => log.debug(text(m)),
    trace: (m) => log.trace(text(m)),
  };
}
