import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import type { AutomationTokenInfo, SessionRecord, Storage } from '../storage/types.js';

/** SHA-256 hex of a bearer token: the only form in which a token is kept or persisted. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** 256 random bits, base64url: safe in headers, URLs and form bodies without escaping. */
function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export interface TokenStoreOptions {
  /** Token lifetime in seconds. */
  lifetime: number;
  /** Live sessions kept per user; creating one more drops that user's oldest. */
  maxPerUser: number;
  now?: () => number;
}

/**
 * Sessions by token hash, mirrored to storage. A token is persisted before it is handed out, so
 * a restart never forgets a token a client holds. Expiry is absolute (no sliding renewal).
 */
export class TokenStore {
  private readonly sessions = new Map<string, SessionRecord>();
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
    if (store.sessions.size !== stored.length) await store.persist();
    return store;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** A session; with `automation`, an automation token living `lifetime` seconds (default: until revoked). */
  async create(username: string, client: string, scope: string[], automation?: { info: AutomationTokenInfo; lifetime?: number }): Promise<{ token: string; record: SessionRecord }> {
    const token = newToken();
    const lifetime = automation ? automation.lifetime : this.options.lifetime;
    const record: SessionRecord = {
      tokenHash: hashToken(token),
      username,
      client,
      scope,
      expires: lifetime === undefined ? Number.MAX_SAFE_INTEGER : this.now() + lifetime * 1000,
      ...(automation ? { automation: automation.info } : {}),
    };
    if (!automation) this.dropOldestBeyondCap(username);
    this.sessions.set(record.tokenHash, record);
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

  async remove(tokenHash: string): Promise<boolean> {
    if (!this.sessions.delete(tokenHash)) return false;
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

  private dropOldestBeyondCap(username: string): void {
    const mine = [...this.sessions.values()].filter((s) => s.username === username && s.automation === undefined);
    if (mine.length < this.options.maxPerUser) return;
    mine.sort((a, b) => a.expires - b.expires);
    for (const s of mine.slice(0, mine.length - this.options.maxPerUser + 1)) this.sessions.delete(s.tokenHash);
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
        return this.storage.saveSessions([...this.sessions.values()]);
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
    typeof s.expires === 'number'
  );
}
