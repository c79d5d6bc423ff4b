/**
 * The storage contract. The file backend is the default; a PostgreSQL backend will follow so that
 * several Runnel instances share one configuration. Everything the runtime persists goes through
 * this interface, and each method is one atomic step from the caller's point of view.
 */

import type { QueueStore } from './queue-contract.js';

/** One element of a flow configuration, as deployed (credentials already stripped). */
export interface FlowNodeConfig {
  id: string;
  type: string;
  z?: string;
  [key: string]: unknown;
}

/** Credentials of every node, by node id, in clear. Only the credentials layer sees this shape. */
export type CredentialMap = Record<string, Record<string, unknown>>;

/**
 * Credentials as persisted: an opaque, already-encrypted document (or a clear one when the user
 * disabled encryption). Storage never encrypts or decrypts; the credentials layer does.
 */
export type StoredCredentials = Record<string, unknown>;

export interface FlowsSnapshot {
  flows: FlowNodeConfig[];
  credentials: StoredCredentials | null;
  /** SHA-256 hex of the compact JSON of `flows`. */
  rev: string;
  /** The deployment type that produced this rev, where the backend records it (shared backends do). */
  type?: string;
  /** Set when the stored pair was repaired at load (e.g. a crash between two writes): what happened. */
  recovered?: string;
}

export interface SaveFlowsRequest {
  flows: FlowNodeConfig[];
  /** Pass null to keep the stored credentials unchanged. */
  credentials: StoredCredentials | null;
  /** When given, the save only happens if the stored rev still equals it (compare-and-swap). */
  expectedRev?: string;
  /** `JSON.stringify(flows)`, when the caller has it already (a 10,000-node config is megabytes). */
  json?: string;
  /** `hashJson(json)`, when the caller has it already; ignored without `json`. */
  rev?: string;
  /** `json` as UTF-8, when the caller has it already: a backend writing bytes takes these; ignored without `json`. */
  bytes?: Uint8Array;
  /** The deployment type of the deploy (full, nodes, flows): other instances apply the change the same way. */
  type?: string;
  /**
   * Records the saved flows and credentials as a new revision in the same atomic step, keeping the
   * newest `flowHistory.max`.
   */
  revision?: RevisionMeta;
}

/** What a revision says about itself; the backend adds `seq`, `rev`, `prevRev`, the content. */
export interface RevisionMeta {
  /** `deploy`, `reload`, `rollback`; `external` when the backend found flows nobody deployed (a hand edit). */
  action: 'deploy' | 'reload' | 'rollback' | 'external';
  /** Deployment type of the deploy (`full`, `nodes`, `flows`, `reload`). */
  type: string;
  /** Epoch milliseconds. */
  time: number;
  user?: string;
  nodeCount: number;
  /** Per tab id (`global` for nodes outside tabs): nodes added, changed, removed by this revision. */
  summary: Record<string, { added: number; changed: number; removed: number }>;
  /** For a rollback: the seq of the revision it restored. */
  restoredSeq?: number;
}

export interface RevisionInfo extends RevisionMeta {
  /** Increases by one with every revision; never reused. */
  seq: number;
  /** The flows' rev (content hash): two revisions with the same content share it. */
  rev: string;
  /** The rev of the flows this revision replaced. */
  prevRev: string;
}

export interface Revision extends RevisionInfo {
  flows: FlowNodeConfig[];
  /** The credentials document as stored with this revision (encrypted as at rest). */
  credentials: StoredCredentials | null;
}

export interface SessionRecord {
  /** SHA-256 hex of the bearer token; the token itself is never stored. */
  tokenHash: string;
  username: string;
  client: string;
  scope: string[];
  /** Epoch milliseconds. */
  expires: number;
  /**
   * Fingerprint of the user's password hash at login (for an automation token: of its creator's
   * when it was made): a changed password ends the session or token.
   */
  stamp?: string;
  /**
   * For a login session through an OpenID Connect provider: a fingerprint of the provider's session
   * id (the ID token's `sid`), which a back-channel logout may name instead of the user.
   */
  providerSession?: string;
  /**
   * The client address of the password login that made the session: a login from it goes ahead
   * of guesses from other addresses, after a restart too (see auth/known-addresses.ts).
   */
  address?: string;
  /** Set for an automation token (POST /auth/tokens) rather than a login session. */
  automation?: AutomationTokenInfo;
}

/** What an automation token is, apart from its secret. */
export interface AutomationTokenInfo {
  id: string;
  name: string;
  /** Epoch milliseconds. */
  created: number;
  /** The user of adminAuth.users who made it, directly or through `via`: the token follows their permissions. */
  createdBy: string;
  /** The automation tokens it was made with, the one the user made first; absent when the user made it directly. */
  via?: Array<{ id: string; name: string }>;
}

/** Small runtime state: the generated credential key, instance id, installed modules. */
export type RuntimeConfig = Record<string, unknown>;

/** A change another instance committed to a shared backend. */
export type StorageChange =
  | { kind: 'flows'; rev: string; type: string; origin: string }
  | { kind: 'sessions'; origin: string }
  /** Context values written elsewhere: these top-level keys of a scope (null: the whole scope). */
  | { kind: 'context'; scope: string; keys: string[] | null; origin: string }
  /** The shared list of installed node modules changed. */
  | { kind: 'modules'; origin: string }
  /** Messages were enqueued on a durable queue (src/storage/queue-contract.ts). */
  | { kind: 'queue'; name: string; origin: string }
  /** A project's repository, the set of projects or the active one changed (src/storage/postgres/projects.ts). */
  | { kind: 'projects'; origin: string }
  /** The change feed was interrupted and is back: changes may have been missed, compare revs. */
  | { kind: 'resync' };

/** One instance as its heartbeats describe it (GET /cluster). */
export interface InstanceRecord {
  id: string;
  url: string | null;
  version: string;
  rev: string;
  state: string;
  primary: boolean;
  /** The primary's lease epoch (null for the others): raised at every change of primary. */
  epoch?: number | null;
  /** ISO time of the last heartbeat, by the database's clock. */
  lastSeen: string;
  modules: Record<string, unknown>;
}

/** One stored context value: a scope (`global`, a flow id, `node:flow`), a top-level key, JSON text. */
export interface ContextEntry {
  scope: string;
  key: string;
  value: string;
}

/** Context values every instance shares (the `postgres` context store keeps them here). */
export interface SharedContext {
  load(): Promise<ContextEntry[]>;
  /** The stored values of some keys of a scope (all of its keys when `keys` is null). */
  read(scope: string, keys: string[] | null): Promise<ContextEntry[]>;
  /**
   * Writes values (`undefined` deletes the key) in one transaction and tells the other instances.
   * `primaryOnly`: the values belong to primary-only work, so they commit only while this instance
   * holds the primary's lease in the database, with the epoch it was elected with; otherwise
   * nothing is written and the write fails with LeaseLostError.
   */
  write(changes: Array<{ scope: string; key: string; value: string | undefined }>, primaryOnly?: boolean): Promise<void>;
  deleteScope(scope: string): Promise<void>;
  /** Deletes every node and flow scope whose id (before the `:`) is not listed; global stays. */
  clean(activeIds: string[]): Promise<void>;
}

/** One module of the shared list: what the module manager records about it (opaque to storage). */
export interface SharedModuleEntry {
  name: string;
  record: Record<string, unknown>;
}

/**
 * The node modules every instance sharing the backend installs: one list they all reconcile to,
 * with the bytes of uploaded tarballs (other instances cannot read the uploader's user dir).
 */
export interface SharedModules {
  list(): Promise<SharedModuleEntry[]>;
  /**
   * Adds or replaces a module's record and tells the other instances. `tarball`: the uploaded
   * package's bytes; null drops stored bytes; omitted keeps them.
   */
  put(name: string, record: Record<string, unknown>, tarball?: Buffer | null): Promise<void>;
  /** Removes a module from the list (with its bytes) and tells the other instances. */
  remove(name: string): Promise<void>;
  /** The stored tarball of a module; undefined when there is none. */
  tarball(name: string): Promise<Buffer | undefined>;
}

/** One project as the cluster keeps it: its whole repository, and what git keeps outside the refs. */
export interface StoredProject {
  name: string;
  /** Raised by every write: a write based on an older version is refused. */
  version: number;
  /** Every ref (`[sha, refname]`): the objects are in the project's bundles up to this version. */
  refs: Array<[string, string]>;
  /** The checked-out branch. */
  head: string;
  /** The repository's `remote.*` and `branch.*` settings (remotes, upstreams), which a bundle does not carry. */
  config: Array<[string, string]>;
  /** The project's .config.projects.json entry (its credential secret). */
  entry: Record<string, unknown>;
}

/**
 * Projects on a cluster: the database holds every project's repository; instances keep working
 * clones. A save names the version it started from and is refused (`project_version_mismatch`)
 * when another instance saved meanwhile, so of two writes at once exactly one is kept.
 */
export interface SharedProjects {
  /** Each project's version, and the active project. */
  versions(): Promise<{ versions: Record<string, number>; active: string | undefined }>;
  get(name: string): Promise<StoredProject | undefined>;
  /** The bundles saved after version `after`, oldest first: each holds the objects its save added. */
  bundles(name: string, after: number): Promise<Buffer[]>;
  /** Saves a project written on top of `base` (0: a new project) with the objects it added; answers the new version. */
  save(project: Omit<StoredProject, 'version'>, bundle: Buffer | undefined, base: number): Promise<number>;
  /** Removes a project last seen at `base`. */
  remove(name: string, base: number): Promise<void>;
  setActive(name: string | undefined): Promise<void>;
}

/** What a backend that several instances share (PostgreSQL) adds: the changes made elsewhere. */
export interface SharedStorage {
  /** This instance's id; changes it made itself are not reported back to it. */
  readonly instanceId: string;
  /** Calls `listener` for every change another instance commits; returns the unsubscribe function. */
  onChange(listener: (change: StorageChange) => void): () => void;
  readonly context: SharedContext;
  readonly modules: SharedModules;
  readonly projects: SharedProjects;
  /** A session another instance may have created since this one last read the sessions. */
  findSession(tokenHash: string): Promise<SessionRecord | undefined>;
  /**
   * Removes the session of `tokenHash` if it is `client`'s, in one statement: of instances taking
   * the same one at once, exactly one gets it (a one-time code is exchanged once).
   */
  takeSession(tokenHash: string, client: string): Promise<SessionRecord | undefined>;
  /**
   * Campaigns for primary: `onRole(true)` when this instance becomes the one primary, `onRole(false)`
   * when it stops being it (could not renew its lease in time), with the lease's epoch. Returns the
   * function that leaves the election.
   */
  campaign(onRole: (primary: boolean, epoch?: number) => void): () => Promise<void>;
  /** Records this instance as alive, with what it runs. */
  heartbeat(info: Omit<InstanceRecord, 'id' | 'lastSeen'>): Promise<void>;
  /** Instances whose last heartbeat is recent; the others have dropped out. */
  listInstances(): Promise<InstanceRecord[]>;
  /** Removes this instance from the list (a clean stop). */
  leave(): Promise<void>;
  /** The rev in the shared store now, and the deployment type that produced it (to catch up after a resync). */
  currentRev(): Promise<{ rev: string; type: string }>;
  /** What this instance tells the others' editors and live pages. */
  readonly relay: ClusterRelay;
}

/** A message one instance relays to the others. */
export interface RelayMessage {
  /** The instance that sent it. */
  origin: string;
  kind: string;
  data: unknown;
}

/**
 * Short-lived messages between instances (debug output, node status): each reaches every other
 * instance at most once, in the order its sender published; what is sent while the database is
 * unreachable is lost, never delivered twice.
 */
export interface ClusterRelay {
  /** The longest message (its JSON, in bytes) that is sent; a longer one is dropped, so callers shorten theirs. */
  readonly maxMessageBytes: number;
  publish(kind: string, data: unknown): void;
  /** Calls `listener` for every message another instance publishes; returns the unsubscribe function. */
  onMessage(listener: (message: RelayMessage) => void): () => void;
}

/**
 * Failed logins by key (the throttle's address, user and (address, user) keys), as epoch-ms times.
 * A shared backend counts every instance's failures, so a limit holds across the cluster.
 */
export interface LoginFailures {
  /** The failure times after `since` of each key that has any, oldest first. */
  recent(keys: string[], since: number): Promise<Record<string, number[]>>;
  /**
   * One atomic step, also across instances: reads the keys' failure times after `since` and, when
   * `admit` accepts them, records a failure at `now` under every key. Resolves with the times read
   * and whether the failure was recorded.
   */
  countIf(keys: string[], since: number, now: number, admit: (times: Record<string, number[]>) => boolean): Promise<{ recorded: boolean; times: Record<string, number[]> }>;
  /** A successful login: takes back the newest failure of each `pop` key and forgets the `clear` keys. */
  forgive(pop: string[], clear: string[]): Promise<void>;
  /** Forgets every failure at or before `before`. */
  prune(before: number): Promise<void>;
}

export interface Storage {
  /** Present when other instances share this storage; undefined for a single instance's files. */
  readonly shared?: SharedStorage;
  /** Durable queues: on this instance's disk for the file backend, shared by every instance for a shared one. */
  readonly queues: QueueStore;
  /** Login throttling's counters: kept in memory by the file backend (a single instance), in the database by a shared one. */
  readonly loginFailures: LoginFailures;
  /** Where the credentials are kept, when that is a file a user can remove (the file backend's path). */
  readonly credentialsFile?: string;
  /**
   * Points the flows and credentials at another pair of files (the active project's), the file
   * backend only: the next read loads them. Without `paths`, back to the settings' flowFile.
   */
  useFlowFiles?(paths?: { flows: string; creds: string; beforeSave?: () => Promise<void> }): Promise<void>;
  /** Prepares the backend (creates the user dir, repairs an interrupted save). Call once. */
  init(): Promise<void>;
  getFlows(): Promise<FlowsSnapshot>;
  /**
   * Saves flows and credentials as one unit. Throws RunnelError `version_mismatch` (409) when
   * `expectedRev` is given and differs from the stored rev; nothing is written then.
   */
  saveFlows(req: SaveFlowsRequest): Promise<{ rev: string }>;
  /**
   * Records the stored flows and credentials as they are now as a revision (a reload deploys them
   * again). Resolves with the new revision's description.
   */
  recordRevision(meta: RevisionMeta): Promise<RevisionInfo>;
  /**
   * Revisions newest first, at most `limit`, only those with seq below `before` when given. The
   * newest revision always describes the stored flows (a backend repairs an interrupted save so).
   */
  listRevisions(query: { limit: number; before?: number }): Promise<RevisionInfo[]>;
  /**
   * One kept revision with its content, by seq, or the newest with the given rev; undefined when
   * there is none.
   */
  getRevision(ref: { seq: number } | { rev: string }): Promise<Revision | undefined>;
  getSessions(): Promise<SessionRecord[]>;
  /**
   * Saves this instance's view of the sessions: those it read or saved before and that are missing
   * now are removed, new ones are added. With a shared backend, sessions other instances added
   * since this instance last read them are kept.
   */
  saveSessions(sessions: SessionRecord[]): Promise<void>;
  getRuntimeConfig(): Promise<RuntimeConfig>;
  /** The editor's per-user settings (GET /settings/user), `{}` when none were saved. */
  getUserSettings(username: string): Promise<Record<string, unknown>>;
  /** Replaces one user's editor settings; other users' are untouched. */
  saveUserSettings(username: string, settings: Record<string, unknown>): Promise<void>;
  saveRuntimeConfig(config: RuntimeConfig): Promise<void>;
  /**
   * Read-modify-write of the runtime config as one step, also across instances sharing the
   * backend (so two instances starting at once agree on one generated key). Resolves with what
   * was stored.
   */
  updateRuntimeConfig(change: (config: RuntimeConfig) => RuntimeConfig): Promise<RuntimeConfig>;
  /** The editor's local library: a file's text, or a folder's listing (`[dir, ..., {fn, ...meta}]`). */
  getLibraryEntry(type: string, path: string): Promise<string | (string | Record<string, unknown>)[]>;
  saveLibraryEntry(type: string, path: string, meta: Record<string, unknown>, body: string): Promise<void>;
  /** Waits for pending writes; the backend may not be used afterwards. */
  close(): Promise<void>;
}
