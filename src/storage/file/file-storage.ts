import { FileQueueStore } from './file-queues.js';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../../base/errors.js';
import type { Logger } from '../../base/log.js';
import type { Settings } from '../../settings/settings.js';
import { LibraryFiles } from './library-files.js';
import { backupPathFor, readTextIfExists, removeStaleTemps, writeFileAtomic } from '../atomic-file.js';
import { credentialsPathIn, credsFileText, flowsFileText, loadFlowPair, nodeRedCredsFileText, type LoadedCreds, type PairPaths } from './flow-pair.js';
import { hashJson } from '../rev.js';
import { SerialQueue } from '../../base/serial-queue.js';
import { FileHistory } from './file-history.js';
import { MemoryLoginFailures } from '../memory-login-failures.js';
import type {
  FlowNodeConfig, FlowsSnapshot, Revision, RevisionInfo, RevisionMeta, RuntimeConfig, SaveFlowsRequest, SessionRecord, Storage, StoredCredentials,
} from '../contract.js';

/**
 * The default backend: Node-RED's file layout in the user dir, so a Node-RED user dir loads as is.
 * The flows pair is cached in memory; a stat of both files tells whether someone changed them
 * behind our back (a hand edit before a `reload` deploy), in which case they are read again.
 */

interface PairState {
  /** Compact JSON of the flows: parsed afresh for every caller, so nobody shares our copy. */
  flowsJson: string;
  /** The array parsed from the file, which nothing else holds: the next reader takes it instead of parsing flowsJson again. */
  unclaimed?: FlowNodeConfig[];
  rev: string;
  creds: LoadedCreds;
  recovered?: string;
  /** Identity of the two files when last read or written. */
  signature: string;
}

const SECRET_FILE_MODE = 0o600;
/** Suffix of the copy of Node-RED's credentials file kept when Runnel first rewrites it. */
const NODE_RED_COPY = '.node-red.bak';

export function createFileStorage(settings: Settings, log: Logger): Storage {
  return new FileStorage(settings, log.child({ module: 'storage' }));
}

class FileStorage implements Storage {
  readonly loginFailures = new MemoryLoginFailures();
  readonly queues: FileQueueStore;
  private readonly queue = new SerialQueue();
  private readonly userDir: string;
  private readonly defaultPaths: PairPaths;
  private paths: PairPaths;
  private readonly sessionsFile: string;
  private readonly runtimeFile: string;
  /** Node-RED's file for the editor's per-user settings, so a user dir moves between the two. */
  private readonly usersFile: string;
  private readonly library: LibraryFiles;
  private readonly defaultPretty: boolean;
  private pretty: boolean;
  /** The credentials file is a project's, kept as Node-RED keeps it (see saveFlows). */
  private nodeRedCreds = false;
  private readonly history: FileHistory;
  private state: PairState | undefined;
  private closed = false;

  constructor(settings: Settings, private readonly log: Logger) {
    this.userDir = settings.userDir;
    const flows = path.resolve(settings.userDir, settings.flowFile);
    this.defaultPaths = { flows, creds: credentialsPathIn(settings.userDir, flows) };
    this.paths = this.defaultPaths;
    this.sessionsFile = path.join(settings.userDir, '.sessions.json');
    this.runtimeFile = path.join(settings.userDir, '.config.runtime.json');
    this.usersFile = path.join(settings.userDir, '.config.users.json');
    this.library = new LibraryFiles(settings.userDir);
    this.defaultPretty = settings.flowFilePretty;
    this.pretty = settings.flowFilePretty;
    this.history = new FileHistory(path.join(settings.userDir, '.history'), settings.flowHistory.max, log);
    this.queues = new FileQueueStore(path.join(settings.userDir, '.queues'));
  }

  get credentialsFile(): string {
    return this.paths.creds;
  }

  useFlowFiles(paths?: PairPaths): Promise<void> {
    this.assertOpen();
    return this.queue.run(async () => {
      this.paths = paths ?? this.defaultPaths;
      // A project's files are pretty-printed, as Node-RED writes them there: git merges them line by line.
      this.pretty = paths !== undefined || this.defaultPretty;
      this.nodeRedCreds = paths !== undefined;
      this.state = undefined;
      await mkdir(path.dirname(this.paths.flows), { recursive: true });
    });
  }

  async init(): Promise<void> {
    this.assertOpen();
    const flowsDir = path.dirname(this.paths.flows);
    await mkdir(this.userDir, { recursive: true });
    await mkdir(flowsDir, { recursive: true });
    for (const dir of new Set([this.userDir, flowsDir])) {
      const removed = await removeStaleTemps(dir);
      if (removed.length > 0) this.log.info({ dir, files: removed }, 'Removed temp files left by an interrupted write');
    }
    await this.history.init();
    await this.queues.init();
    await this.queue.run(async () => {
      await this.refresh();
      await this.history.collect();
    });
  }

  getFlows(): Promise<FlowsSnapshot> {
    this.assertOpen();
    return this.queue.run(async () => {
      const s = await this.refresh();
      const flows = s.unclaimed ?? JSON.parse(s.flowsJson);
      s.unclaimed = undefined;
      return {
        flows,
        credentials: s.creds.doc === null ? null : structuredClone(s.creds.doc),
        rev: s.rev,
        ...(s.recovered === undefined ? {} : { recovered: s.recovered }),
      };
    });
  }

  saveFlows(req: SaveFlowsRequest): Promise<{ rev: string }> {
    this.assertOpen();
    return this.queue.run(async () => {
      await this.paths.beforeSave?.();
      const current = await this.refresh();
      if (req.expectedRev !== undefined && req.expectedRev !== current.rev) {
        throw new RunnelError('version_mismatch', `The flows have changed since rev ${req.expectedRev} was read`);
      }
      const flowsJson = req.json ?? JSON.stringify(req.flows);
      const rev = req.json !== undefined && req.rev !== undefined ? req.rev : hashJson(flowsJson);
      const flowsBytes = req.json !== undefined ? req.bytes : undefined;
      const doc: StoredCredentials | null = req.credentials === null ? current.creds.doc : structuredClone(req.credentials);
      // The revision is committed first: a crash before the flows are saved leaves a revision whose
      // prevRev is the stored rev, which the next load drops (see FileHistory.reconcile).
      if (req.revision) await this.history.append({ flows: req.flows, flowsJson, flowsBytes, rev, credentials: doc }, req.revision, current.rev);
      // A project's history keeps the Node-RED file already: no copy beside it in the working copy.
      if (current.creds.rev === undefined && current.creds.doc !== null && this.paths === this.defaultPaths) await this.keepNodeRedCredentials();
      let creds: LoadedCreds;
      if (this.nodeRedCreds) {
        // A project's file is committed and shared with Node-RED: its document alone, as Node-RED
        // writes it, and only when the credentials changed, so a deploy leaves no change for git.
        if (req.credentials !== null) await writeFileAtomic(this.paths.creds, nodeRedCredsFileText(doc), { backup: true, mode: SECRET_FILE_MODE });
        creds = { doc, rev: undefined, prevRev: undefined };
      } else {
        // Credentials first: a crash between the two renames leaves new credentials tagged with
        // prevRev = the flows still on disk, which is exactly what the loader recognises and undoes.
        await writeFileAtomic(this.paths.creds, credsFileText(doc, rev, current.rev, this.pretty), { backup: true, mode: SECRET_FILE_MODE });
        creds = { doc, rev, prevRev: current.rev };
      }
      await writeFileAtomic(this.paths.flows, this.pretty ? flowsFileText(req.flows, true) : (flowsBytes ?? flowsJson), { backup: true });
      this.state = { flowsJson, rev, creds, signature: await this.signature() };
      if (req.revision) await this.history.collect();
      return { rev };
    });
  }

  /**
   * The credentials file is still Node-RED's (no Runnel header) and is about to be rewritten in
   * Runnel's format: a copy is kept, so the user dir can go back to Node-RED even without
   * `runnel export`. Each Node-RED file replaces the previous copy.
   */
  private async keepNodeRedCredentials(): Promise<void> {
    const text = await readTextIfExists(this.paths.creds);
    if (text === undefined) return;
    const copy = `${this.paths.creds}${NODE_RED_COPY}`;
    await writeFileAtomic(copy, text, { backup: false, mode: SECRET_FILE_MODE });
    this.log.info({ file: this.paths.creds, copy }, 'Node-RED\'s credentials file is rewritten in Runnel\'s format; a copy of it is kept');
  }

  recordRevision(meta: RevisionMeta): Promise<RevisionInfo> {
    this.assertOpen();
    return this.queue.run(async () => {
      const s = await this.refresh();
      const info = await this.history.append(this.storedPair(s), meta, s.rev);
      await this.history.collect();
      return info;
    });
  }

  listRevisions(query: { limit: number; before?: number }): Promise<RevisionInfo[]> {
    this.assertOpen();
    return this.queue.run(async () => {
      await this.refresh();
      return this.history.list(query.limit, query.before);
    });
  }

  getRevision(ref: { seq: number } | { rev: string }): Promise<Revision | undefined> {
    this.assertOpen();
    return this.queue.run(async () => {
      await this.refresh();
      return this.history.get(ref);
    });
  }

  private storedPair(s: PairState) {
    return { flows: JSON.parse(s.flowsJson) as FlowNodeConfig[], flowsJson: s.flowsJson, rev: s.rev, credentials: s.creds.doc };
  }

  async getSessions(): Promise<SessionRecord[]> {
    this.assertOpen();
    // Node-RED keeps its sessions as an object by token: they are not carried over (log in again).
    const sessions = await this.readJson(this.sessionsFile, (v) => Array.isArray(v) || isPlainObject(v));
    return Array.isArray(sessions) ? (sessions as SessionRecord[]) : [];
  }

  saveSessions(sessions: SessionRecord[]): Promise<void> {
    this.assertOpen();
    const text = JSON.stringify(sessions);
    return this.queue.run(() => writeFileAtomic(this.sessionsFile, text, { backup: true, mode: SECRET_FILE_MODE }));
  }

  async getRuntimeConfig(): Promise<RuntimeConfig> {
    this.assertOpen();
    const config = await this.readJson(this.runtimeFile, isPlainObject);
    if (config !== undefined) return config as RuntimeConfig;
    return this.legacyRuntimeConfig();
  }

  saveRuntimeConfig(config: RuntimeConfig): Promise<void> {
    this.assertOpen();
    const text = JSON.stringify(config, null, 4);
    return this.queue.run(() => writeFileAtomic(this.runtimeFile, text, { backup: true, mode: SECRET_FILE_MODE }));
  }

  updateRuntimeConfig(change: (config: RuntimeConfig) => RuntimeConfig): Promise<RuntimeConfig> {
    this.assertOpen();
    return this.queue.run(async () => {
      const next = change(await this.getRuntimeConfig());
      await writeFileAtomic(this.runtimeFile, JSON.stringify(next, null, 4), { backup: true, mode: SECRET_FILE_MODE });
      return structuredClone(next);
    });
  }

  async getUserSettings(username: string): Promise<Record<string, unknown>> {
    this.assertOpen();
    const users = (await this.readJson(this.usersFile, isPlainObject)) as Record<string, unknown> | undefined;
    const mine = users && Object.hasOwn(users, username) ? users[username] : undefined;
    return isPlainObject(mine) ? (mine as Record<string, unknown>) : {};
  }

  saveUserSettings(username: string, settings: Record<string, unknown>): Promise<void> {
    this.assertOpen();
    // Read inside the queue so two users saving at once do not lose each other's change.
    return this.queue.run(async () => {
      const users = ((await this.readJson(this.usersFile, isPlainObject)) as Record<string, unknown> | undefined) ?? {};
      const text = JSON.stringify({ ...users, [username]: settings }, null, 4);
      await writeFileAtomic(this.usersFile, text, { backup: true });
    });
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

  /** Runs inside the queue: reloads the pair when the files are not the ones we last saw. */
  private async refresh(): Promise<PairState> {
    const signature = await this.signature();
    if (this.state !== undefined && this.state.signature === signature) return this.state;
    const pair = await loadFlowPair(this.paths, this.pretty, this.log);
    const flowsJson = pair.flows.json;
    await this.history.reconcile({ flows: pair.flows.flows, flowsJson, rev: pair.flows.rev, credentials: pair.creds.doc });
    this.state = {
      flowsJson,
      unclaimed: pair.flows.flows,
      rev: pair.flows.rev,
      creds: pair.creds,
      ...(pair.recovered === undefined ? {} : { recovered: pair.recovered }),
      // Repairs may have rewritten the files, so identify them afresh.
      signature: pair.recovered === undefined ? signature : await this.signature(),
    };
    return this.state;
  }

  private async signature(): Promise<string> {
    const one = async (file: string) => {
      try {
        const s = await stat(file);
        return `${s.ino}:${s.size}:${s.mtimeMs}`;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '-';
        throw e;
      }
    };
    return `${await one(this.paths.flows)}|${await one(this.paths.creds)}`;
  }

  /**
   * A small JSON file; an unreadable one falls back to its backup. A missing file is just missing
   * (someone may have deleted it on purpose, e.g. to drop every session).
   */
  private async readJson(file: string, valid: (v: unknown) => boolean): Promise<unknown> {
    for (const candidate of [file, backupPathFor(file)]) {
      const text = await readTextIfExists(candidate);
      if (text === undefined) return undefined;
      try {
        const value: unknown = JSON.parse(text);
        if (valid(value)) return value;
      } catch {
        // Reported below, then the backup is tried.
      }
      this.log.error({ file: candidate }, 'Unreadable storage file ignored');
    }
    return undefined;
  }

  /** Node-RED before 1.1 kept `_credentialSecret` and `instanceId` in `.config.json`. */
  private async legacyRuntimeConfig(): Promise<RuntimeConfig> {
    const legacy = await this.readJson(path.join(this.userDir, '.config.json'), isPlainObject);
    if (legacy === undefined) return {};
    const { _credentialSecret, instanceId } = legacy as Record<string, unknown>;
    return {
      ...(_credentialSecret === undefined ? {} : { _credentialSecret }),
      ...(instanceId === undefined ? {} : { instanceId }),
    };
  }
}

function isPlainObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
