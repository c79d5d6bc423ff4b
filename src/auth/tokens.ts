import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../base/log.js';
import type { AutomationTokenInfo, SessionRecord, Storage } from '../storage/contract.js';

/** SHA-256 hex of a bearer token: the only form in which a token is kept or persisted. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 256 random bits, base64url: safe in headers, URLs and form bodies without escaping. */
function newToken(): string {
  return randomBytes(32).toString('base64url');
}

type SessionMarks = Pick<SessionRecord, 'stamp' | 'providerSession' | 'address'>;

export interface TokenStoreOptions {
  /** Token lifetime in seconds. */
  lifetime: number;
  /** Live sessions kept in all; creating one more expires the oldest, reported to onEvict. */
  maxSessions: number;
  onEvict?: (evicted: SessionRecord) => void;
  now?: () => number;
}

/**
 * Sessions by token hash, mirrored to storage. A token is persisted before it is handed out, so
 * a restart never forgets a token a client holds. Expiry is absolute (no sliding renewal).
 */
export class TokenStore {
  private readonly sessions = new Map<string, SessionRecord>();
  /** Hashes storage held at the last read: one missing from the next read was revoked elsewhere. */
  private storedHashes = new Set<string>();
  /** Hashes removed here whose removal storage may not hold yet: a read must not bring them back. */
  private readonly removedHere = new Set<string>();
  /** Fleeting records no save has taken yet: removing one needs no save either. */
  private readonly unsaved = new Set<string>();
  private saving: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private readonly now: () => number;

  private constructor(
    private readonly storage: Storage,
    private readonly log: Logger,
    private readonly options: TokenStoreOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Loads the stored sessions, dropping expired and malformed ones. */
  static async open(storage: Storage, log: Logger, options: TokenStoreOptions): Promise<TokenStore> {
    const store = new TokenStore(storage, log, options);
    const stored = await storage.getSessions();
    const now = store.now();
    for (const s of stored) if (isSessionRecord(s) && s.expires > now) store.sessions.set(s.tokenHash, s);
    if (storage.shared) store.storedHashes = new Set(stored.map((s) => s.tokenHash));
    if (store.sessions.size !== stored.length) await store.persist();
    return store;
  }

  /**
   * Takes in what other instances sharing the storage did: their new sessions, and their
   * revocations (sessions storage held before and no longer does). Local changes not yet saved
   * are kept either way. Without shared storage there is nothing else to take in.
   */
  async reload(): Promise<void> {
    if (!this.storage.shared) return;
    const stored = (await this.storage.getSessions()).filter(isSessionRecord);
    const now = new Set(stored.map((s) => s.tokenHash));
    for (const hash of this.sessions.keys()) if (this.storedHashes.has(hash) && !now.has(hash)) this.sessions.delete(hash);
    for (const s of stored) if (!this.sessions.has(s.tokenHash) && !this.removedHere.has(s.tokenHash)) this.sessions.set(s.tokenHash, s);
    for (const hash of this.removedHere) if (!now.has(hash)) this.removedHere.delete(hash);
    this.storedHashes = now;
  }

  /** The live session of a token created by another instance this one has not heard of yet. */
  async fetch(token: string): Promise<SessionRecord | undefined> {
    const shared = this.storage.shared;
    const tokenHash = hashToken(token);
    if (!shared || this.removedHere.has(tokenHash)) return undefined;
    const s = await shared.findSession(tokenHash);
    if (!s || !isSessionRecord(s) || this.sessions.has(tokenHash) || this.removedHere.has(tokenHash)) return this.getByHash(tokenHash);
    this.sessions.set(tokenHash, s);
    this.storedHashes.add(tokenHash);
    return this.getByHash(tokenHash);
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * A session; with `automation`, an automation token that expires at `expires` (epoch ms;
   * default: lives until revoked). `marks`: what ends it besides expiry (see SessionRecord).
   * `lifetime` (seconds) replaces the sessions' own for this one; `fleeting`: a record only this
   * process needs for its few seconds of life (no other instance shares the storage), kept in memory
   * and saved only with the next change, which spares the login a write.
   */
  async create(username: string, client: string, scope: string[], automation?: { info: AutomationTokenInfo; expires?: number }, marks: SessionMarks = {}, { lifetime = this.options.lifetime, fleeting = false } = {}): Promise<{ token: string; record: SessionRecord }> {
    const token = newToken();
    const record: SessionRecord = {
      tokenHash: hashToken(token),
      username,
      client,
      scope,
      expires: automation ? (automation.expires ?? Number.MAX_SAFE_INTEGER) : this.now() + lifetime * 1000,
      ...(automation ? { automation: automation.info } : {}),
      ...(marks.stamp === undefined ? {} : { stamp: marks.stamp }),
      ...(marks.providerSession === undefined ? {} : { providerSession: marks.providerSession }),
      ...(marks.address === undefined ? {} : { address: marks.address }),
    };
    if (!automation) this.dropOldestBeyondCap();
    this.sessions.set(record.tokenHash, record);
    if (fleeting && !this.storage.shared) {
      this.unsaved.add(record.tokenHash);
      return { token, record };
    }
    try {
      await this.persist();
    } catch (e) {
      this.sessions.delete(record.tokenHash);
      throw e;
    }
    return { token, record };
  }

  /** The live session of a token, or undefined. */
  get(token: string): SessionRecord | undefined {
    return this.getByHash(hashToken(token));
  }

  /** The live automation tokens, oldest first. */
  automationTokens(): SessionRecord[] {
    const now = this.now();
    return [...this.sessions.values()].filter((s) => s.automation !== undefined && s.expires > now).sort((a, b) => a.automation!.created - b.automation!.created);
  }

  getByHash(tokenHash: string): SessionRecord | undefined {
    const s = this.sessions.get(tokenHash);
    return s && s.expires > this.now() ? s : undefined;
  }

  /**
   * Removes a live record of `client` and hands it to this caller only: a second call, here or on
   * another instance, gets undefined. With shared storage the stored copy decides, removed in one
   * statement, so instances taking the same record at once cannot both get it.
   */
  async take(token: string, client: string): Promise<SessionRecord | undefined> {
    const tokenHash = hashToken(token);
    const shared = this.storage.shared;
    if (shared) {
      const taken = this.removedHere.has(tokenHash) ? undefined : await shared.takeSession(tokenHash, client);
      if (this.sessions.get(tokenHash)?.client === client) {
        this.sessions.delete(tokenHash);
        this.forget(tokenHash);
      }
      return taken && isSessionRecord(taken) && taken.expires > this.now() ? taken : undefined;
    }
    const record = this.getByHash(tokenHash);
    if (record?.client !== client) return undefined;
    // Deleting is synchronous: of two callers that got this far, one deletes it.
    if (!(await this.remove(tokenHash))) return undefined;
    return record;
  }

  async remove(tokenHash: string): Promise<boolean> {
    if (!this.sessions.delete(tokenHash)) return false;
    this.forget(tokenHash);
    if (this.unsaved.delete(tokenHash)) return true;
    await this.persist();
    return true;
  }

  /** Forgets expired sessions and saves when any went. */
  async prune(): Promise<number> {
    const now = this.now();
    let removed = 0;
    for (const [h, s] of this.sessions) {
      if (s.expires <= now) {
        this.sessions.delete(h);
        this.forget(h);
        removed++;
      }
    }
    if (removed > 0) await this.persist();
    return removed;
  }

  /** Waits for the last save. */
  async flush(): Promise<void> {
    await this.saving.catch(() => undefined);
  }

  /** Whether `username` holds a live session of a password login from `address`. */
  loggedInFrom(username: string, address: string): boolean {
    const now = this.now();
    for (const s of this.sessions.values()) if (s.address === address && s.username === username && s.expires > now) return true;
    return false;
  }

  /** Live login sessions (not automation tokens), oldest first. */
  list(): SessionRecord[] {
    const now = this.now();
    return [...this.sessions.values()].filter((s) => s.automation === undefined && s.expires > now);
  }

  /** Ends every session and automation token `keep` refuses; saves when any went. */
  async retain(keep: (s: SessionRecord) => boolean): Promise<SessionRecord[]> {
    const removed: SessionRecord[] = [];
    for (const [h, s] of this.sessions) {
      if (keep(s)) continue;
      this.sessions.delete(h);
      this.forget(h);
      removed.push(s);
    }
    if (removed.length > 0) await this.persist();
    return removed;
  }

  /** Only shared storage is read again, so only then does a removal need remembering. */
  private forget(tokenHash: string): void {
    if (this.storage.shared) this.removedHere.add(tokenHash);
  }

  /**
   * Memory stays bounded without logging anyone out early: only beyond the (large) cap does the
   * oldest login session go (automation tokens never). The map keeps insertion order.
   */
  private dropOldestBeyondCap(): void {
    let logins = 0;
    for (const s of this.sessions.values()) if (s.automation === undefined) logins++;
    for (const s of this.sessions.values()) {
      if (logins < this.options.maxSessions) break;
      if (s.automation !== undefined) continue;
      this.sessions.delete(s.tokenHash);
      this.forget(s.tokenHash);
      this.options.onEvict?.(s);
      logins--;
    }
  }

  /**
   * Saves the current sessions. Saves run one at a time; callers arriving while one runs share a
   * single follow-up save (which snapshots the map when it starts, so it includes their change).
   * A login storm thus costs at most two writes in flight, not one per login.
   */
  private persist(): Promise<void> {
    if (this.queued) return this.queued;
    const next = this.saving
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        const snapshot = [...this.sessions.values()];
        // Saved from now on: removing one of them takes a save again.
        this.unsaved.clear();
        return this.storage.saveSessions(snapshot).then(() => {
          if (this.storage.shared) this.storedHashes = new Set([...this.storedHashes, ...snapshot.map((s) => s.tokenHash)]);
        });
      });
    next.catch((e: unknown) => this.log.error({ err: e }, 'saving sessions failed'));
    this.queued = next;
    this.saving = next;
    return next;
  }
}

function isSessionRecord(v: unknown): v is SessionRecord {
  const s = v as SessionRecord;
  return (
    typeof s === 'object' && s !== null &&
    typeof s.tokenHash === 'string' && /^[0-9a-f]{64}$/.test(s.tokenHash) &&
    typeof s.username === 'string' && typeof s.client === 'string' &&
    Array.isArray(s.scope) && s.scope.every((x) => typeof x === 'string') &&
    typeof s.expires === 'number' &&
    (s.stamp === undefined || typeof s.stamp === 'string') &&
    (s.providerSession === undefined || typeof s.providerSession === 'string') &&
    (s.address === undefined || typeof s.address === 'string')
  );
}
