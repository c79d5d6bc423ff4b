/**
 * The storage contract. The file backend is the default; a PostgreSQL backend will follow so that
 * several Runnel instances share one configuration. Everything the runtime persists goes through
 * this interface, and each method is one atomic step from the caller's point of view.
 */

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
  /** Set for an automation token (POST /auth/tokens) rather than a login session. */
  automation?: AutomationTokenInfo;
}

/** What an automation token is, apart from its secret. */
export interface AutomationTokenInfo {
  id: string;
  name: string;
  /** Epoch milliseconds. */
  created: number;
  createdBy: string;
}

/** Small runtime state: the generated credential key, instance id, installed modules. */
export type RuntimeConfig = Record<string, unknown>;

export interface Storage {
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
  saveSessions(sessions: SessionRecord[]): Promise<void>;
  getRuntimeConfig(): Promise<RuntimeConfig>;
  /** The editor's per-user settings (GET /settings/user), `{}` when none were saved. */
  getUserSettings(username: string): Promise<Record<string, unknown>>;
  /** Replaces one user's editor settings; other users' are untouched. */
  saveUserSettings(username: string, settings: Record<string, unknown>): Promise<void>;
  saveRuntimeConfig(config: RuntimeConfig): Promise<void>;
  /** The editor's local library: a file's text, or a folder's listing (`[dir, ..., {fn, ...meta}]`). */
  getLibraryEntry(type: string, path: string): Promise<string | (string | Record<string, unknown>)[]>;
  saveLibraryEntry(type: string, path: string, meta: Record<string, unknown>, body: string): Promise<void>;
  /** Waits for pending writes; the backend may not be used afterwards. */
  close(): Promise<void>;
}
