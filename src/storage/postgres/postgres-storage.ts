import type pg from 'pg';
import { RunnelError } from '../../base/errors.js';
import type { Logger } from '../../base/log.js';
import { hashJson } from '../rev.js';
import { SerialQueue } from '../../base/serial-queue.js';
import type {
  FlowsSnapshot, InstanceRecord, LoginFailures, Revision, RevisionInfo, RevisionMeta, RuntimeConfig, SaveFlowsRequest, SessionRecord, SharedStorage, Storage, StorageChange,
} from '../contract.js';
import { ChangeFeed, channelOf } from './change-feed.js';
import { PgRelay, relayChannelOf } from './relay.js';
import { DEFAULT_CLUSTER_TIMINGS } from '../../settings/cluster.js';
import { applicationName, createClient, createPool, isConnectionError, quoteIdent, redactUrl, type PostgresConfig } from './connection.js';
import type { LibraryListing } from '../file/library-files.js';
import { Election } from './election.js';
import { Library } from './library.js';
import { Revisions } from './revisions.js';
import { sharedContext, type ContextDb } from './shared-context.js';
import { sharedModules } from './modules.js';
import { postgresQueues } from './queues.js';
import { sharedProjects } from './projects.js';
import type { QueueStore } from '../queue-contract.js';
import { loginFailures } from './login-failures.js';
import { migrate } from './migrations.js';

/**
 * Storage in a PostgreSQL schema that several instances share. The flows row is the one truth:
 * a save is a compare-and-swap against the rev in the database (not this instance's memory), in
 * one transaction with the credentials, and tells the other instances by NOTIFY on commit.
 * Documents are kept as the JSON text they were saved as, so a rev always hashes what is stored.
 */

class StorageUnavailableError extends Error {}

/** An instance whose last heartbeat is older than this has dropped out of the cluster view. */
const INSTANCE_TIMEOUT_S = 5;

/** Heartbeats and the cluster view: a status that cannot be written or read this fast is stale anyway. */
const STATUS_QUERY_MS = 2000;

/** Seconds a client is told to wait when the database is down: about how long a reconnect takes. */
const RETRY_AFTER_S = 5;

/** A lost or refused connection becomes 503 storage_unavailable; anything else stays as it is. */
function unavailable(e: unknown): unknown {
  if (!isConnectionError(e)) return e;
  return new RunnelError('storage_unavailable', `The database cannot be reached (${(e as Error).message}); nothing was changed`, { retryAfter: RETRY_AFTER_S });
}

function guarded<T>(work: Promise<T>): Promise<T> {
  return work.catch((e: unknown) => {
    throw unavailable(e);
  });
}

/** `historyMax`: revisions kept (`flowHistory.max`). */
export function createPostgresStorage(config: PostgresConfig, instanceId: string, log: Logger, historyMax = 50): Storage {
  return new PostgresStorage(config, instanceId, log.child({ module: 'storage' }), historyMax);
}

class PostgresStorage implements Storage {
  readonly shared: SharedStorage;
  readonly loginFailures: LoginFailures;
  readonly queues: QueueStore;
  private readonly pool: pg.Pool;
  private readonly feed: ChangeFeed;
  private readonly relay: PgRelay;
  private readonly t: { flows: string; sessions: string; config: string; instances: string; users: string };
  private readonly revisions: Revisions;
  private readonly library: Library;
  private readonly channel: string;
  /** Saves from this instance, in call order. */
  private readonly queue = new SerialQueue();
  /** Token hashes this instance read or saved: what a saveSessions may remove. */
  private knownSessions = new Set<string>();
  /** The epoch of the primary's lease while this instance holds it (campaign): what primary-only writes carry. */
  private leaseEpoch: number | undefined;
  private closed = false;

  constructor(private readonly config: PostgresConfig, private readonly instanceId: string, private readonly log: Logger, historyMax: number) {
    this.pool = createPool(config, log, applicationName(instanceId));
    const s = quoteIdent(config.schema);
    this.t = { flows: `${s}.flows`, sessions: `${s}.sessions`, config: `${s}.runtime_config`, instances: `${s}.instances`, users: `${s}.user_settings` };
    this.revisions = new Revisions(`${s}.revisions`, historyMax);
    this.library = new Library(`${s}.library`, (text, values) => this.query(text, values));
    this.channel = channelOf(config.schema);
    // What the shared stores need of this storage: one set of bound calls, each store with its table.
    const db: Omit<ContextDb, 'table'> = {
      query: (text, values) => this.query(text, values),
      transaction: (work) => this.transaction(work),
      notify: (client, change) => this.notify(client, change),
      instanceId,
      lease: { table: `${s}.lease`, epoch: () => this.leaseEpoch },
    };
    this.loginFailures = loginFailures({ ...db, table: `${s}.login_failures` });
    const relay = new PgRelay((channel, payload, timeoutMs) => this.query('SELECT pg_notify($1, $2)', [channel, payload], timeoutMs).then(() => undefined), config.schema, instanceId, log);
    this.relay = relay;
    this.feed = new ChangeFeed(() => createClient(config, applicationName(instanceId, 'feed')), config.schema, instanceId, log, (config.cluster ?? DEFAULT_CLUSTER_TIMINGS).checkMs, {
      channel: relayChannelOf(config.schema),
      deliver: (payload) => relay.deliver(payload),
    });
    this.queues = postgresQueues({ ...db, table: `${s}.queue_messages`, channel: this.channel, onChange: (listener) => this.feed.onChange(listener) });
    this.shared = {
      instanceId,
      onChange: (listener: (c: StorageChange) => void) => this.feed.onChange(listener),
      currentRev: () => this.currentRev(),
      findSession: (tokenHash: string) => this.findSession(tokenHash),
      takeSession: (tokenHash: string, client: string) => this.takeSession(tokenHash, client),
      context: sharedContext({ ...db, table: `${s}.context` }),
      modules: sharedModules({ ...db, table: `${s}.modules` }),
      projects: sharedProjects({ ...db, table: `${s}.projects` }),
      campaign: (onRole: (primary: boolean, epoch?: number) => void) => {
        const timings = config.cluster ?? DEFAULT_CLUSTER_TIMINGS;
        const role = (primary: boolean, epoch?: number) => {
          // Before the runtime hears of it: a primary-only write from now on carries this epoch, or none.
          this.leaseEpoch = primary ? epoch : undefined;
          onRole(primary, epoch);
        };
        const election = new Election(() => createClient(config, applicationName(instanceId, 'election'), timings.renewMs * 2), `${s}.lease`, instanceId, timings, role, log);
        election.start();
        return () => election.stop();
      },
      heartbeat: async (info: Omit<InstanceRecord, 'id' | 'lastSeen'>) => {
        await this.query(
          `INSERT INTO ${this.t.instances} (id, info, last_seen) VALUES ($1, $2, now())
             ON CONFLICT (id) DO UPDATE SET info = EXCLUDED.info, last_seen = now()`,
          [instanceId, JSON.stringify(info)],
          STATUS_QUERY_MS,
        );
      },
      listInstances: async () => {
        // The primary is who holds an unexpired lease (and says so), not whoever last claimed it.
        const { rows } = await this.query<{ id: string; info: string; last_seen: Date; holds: boolean; epoch: string }>(
          `SELECT i.id, i.info, i.last_seen, (l.holder = i.id AND l.expires > now()) AS holds, l.epoch
             FROM ${this.t.instances} i CROSS JOIN ${s}.lease l
            WHERE i.last_seen > now() - make_interval(secs => $1) ORDER BY i.id`,
          [INSTANCE_TIMEOUT_S],
          STATUS_QUERY_MS,
        );
        return rows.map((r) => {
          const info = JSON.parse(r.info) as Omit<InstanceRecord, 'id' | 'lastSeen'>;
          const primary = info.primary && r.holds;
          return { id: r.id, ...info, primary, epoch: primary ? Number(r.epoch) : null, lastSeen: r.last_seen.toISOString() };
        });
      },
      relay,
      leave: async () => {
        await this.query(`DELETE FROM ${this.t.instances} WHERE id = $1`, [instanceId]);
      },
    };
  }

  async init(): Promise<void> {
    this.assertOpen();
    try {
      await migrate(this.pool, this.config.schema, this.log);
      await this.feed.start();
    } catch (e) {
      await this.pool.end().catch(() => undefined);
      throw new StorageUnavailableError(`cannot use the PostgreSQL database ${redactUrl(this.config.url)}: ${(e as Error).message}`);
    }
  }

  async getFlows(): Promise<FlowsSnapshot> {
    this.assertOpen();
    const { rows } = await this.query<{ rev: string; flows: string; credentials: string | null; type: string }>(
      `SELECT rev, flows, credentials, deployment_type AS type FROM ${this.t.flows} WHERE id = 1`,
    );
    const row = rows[0]!;
    return { flows: JSON.parse(row.flows), credentials: row.credentials === null ? null : JSON.parse(row.credentials), rev: row.rev, type: row.type };
  }

  private async findSession(tokenHash: string): Promise<SessionRecord | undefined> {
    this.assertOpen();
    const { rows } = await this.query<{ record: string }>(`SELECT record FROM ${this.t.sessions} WHERE token_hash = $1`, [tokenHash]);
    if (rows[0] === undefined) return undefined;
    // Read by this instance now: a later saveSessions must not re-insert it if it was revoked meanwhile.
    this.knownSessions.add(tokenHash);
    return JSON.parse(rows[0].record) as SessionRecord;
  }

  private takeSession(tokenHash: string, client: string): Promise<SessionRecord | undefined> {
    this.assertOpen();
    // In the save queue, so a save of this instance's sessions never races the removal.
    return this.queue.run(async () => {
      const taken = await this.transaction(async (c) => {
        const { rows } = await c.query<{ record: string }>(`DELETE FROM ${this.t.sessions} WHERE token_hash = $1 AND (record::jsonb)->>'client' = $2 RETURNING record`, [tokenHash, client]);
        if (rows[0] !== undefined) await this.notify(c, { kind: 'sessions', origin: this.instanceId });
        return rows[0];
      });
      this.knownSessions.delete(tokenHash);
      return taken === undefined ? undefined : (JSON.parse(taken.record) as SessionRecord);
    });
  }

  private async currentRev(): Promise<{ rev: string; type: string }> {
    this.assertOpen();
    const { rows } = await this.query<{ rev: string; type: string }>(`SELECT rev, deployment_type AS type FROM ${this.t.flows} WHERE id = 1`);
    return rows[0]!;
  }

  saveFlows(req: SaveFlowsRequest): Promise<{ rev: string }> {
    this.assertOpen();
    const flowsJson = req.json ?? JSON.stringify(req.flows);
    const creds = req.credentials === null ? null : JSON.stringify(req.credentials);
    const rev = req.json !== undefined && req.rev !== undefined ? req.rev : hashJson(flowsJson);
    const type = req.type ?? 'full';
    return this.queue.run(() =>
      this.transaction(async (client) => {
        const { rows } = await client.query<{ rev: string; credentials: string | null }>(`SELECT rev, credentials FROM ${this.t.flows} WHERE id = 1 FOR UPDATE`);
        // A retry of a deploy whose commit went unanswered, and that did commit: saved already.
        if (req.expectedRev !== undefined && rows[0]!.rev === rev && rev !== req.expectedRev) return { rev };
        if (req.expectedRev !== undefined && rows[0]!.rev !== req.expectedRev) {
          throw new RunnelError('version_mismatch', `The flows have changed since rev ${req.expectedRev} was read`);
        }
        if (req.revision) {
          await this.revisions.add(client, { rev, prevRev: rows[0]!.rev, meta: req.revision, flows: flowsJson, credentials: creds ?? rows[0]!.credentials });
        }
        await client.query(
          `UPDATE ${this.t.flows} SET rev = $1, flows = $2, credentials = COALESCE($3, credentials),
             deployment_type = $4, origin = $5, updated_at = now() WHERE id = 1`,
          [rev, flowsJson, creds, type, this.instanceId],
        );
        await this.notify(client, { kind: 'flows', rev, type, origin: this.instanceId });
        return { rev };
      }, () => new RunnelError(
        'deploy_outcome_unknown',
        `The connection to the database was lost while the deploy was being committed: it may or may not have been saved. Send the same deploy again with the same rev: if it was saved, the retry changes nothing and answers its rev, or 409 version_mismatch once this instance runs it (GET /flows then shows it)`,
        { retryAfter: RETRY_AFTER_S },
      )),
    );
  }

  recordRevision(meta: RevisionMeta): Promise<RevisionInfo> {
    this.assertOpen();
    return this.queue.run(() =>
      this.transaction(async (client) => {
        const { rows } = await client.query<{ rev: string; flows: string; credentials: string | null }>(
          `SELECT rev, flows, credentials FROM ${this.t.flows} WHERE id = 1 FOR UPDATE`,
        );
        const row = rows[0]!;
        return this.revisions.add(client, { rev: row.rev, prevRev: row.rev, meta, flows: row.flows, credentials: row.credentials });
      }),
    );
  }

  listRevisions(query: { limit: number; before?: number }): Promise<RevisionInfo[]> {
    this.assertOpen();
    return this.revisions.list((text, values) => this.query(text, values), query);
  }

  getRevision(ref: { seq: number } | { rev: string }): Promise<Revision | undefined> {
    this.assertOpen();
    return this.revisions.get((text, values) => this.query(text, values), ref);
  }

  async getUserSettings(username: string): Promise<Record<string, unknown>> {
    this.assertOpen();
    const { rows } = await this.query<{ settings: string }>(`SELECT settings FROM ${this.t.users} WHERE username = $1`, [username]);
    return rows[0] ? (JSON.parse(rows[0].settings) as Record<string, unknown>) : {};
  }

  async saveUserSettings(username: string, settings: Record<string, unknown>): Promise<void> {
    this.assertOpen();
    await this.query(
      `INSERT INTO ${this.t.users} (username, settings) VALUES ($1, $2) ON CONFLICT (username) DO UPDATE SET settings = EXCLUDED.settings`,
      [username, JSON.stringify(settings)],
    );
  }

  getLibraryEntry(type: string, entry: string): Promise<string | LibraryListing> {
    this.assertOpen();
    return this.library.get(type, entry);
  }

  async saveLibraryEntry(type: string, entry: string, meta: Record<string, unknown>, body: string): Promise<void> {
    this.assertOpen();
    await this.library.save(type, entry, meta, body);
  }

  async getSessions(): Promise<SessionRecord[]> {
    this.assertOpen();
    const { rows } = await this.query<{ record: string }>(`SELECT record FROM ${this.t.sessions} ORDER BY seq`);
    const sessions = rows.map((r) => JSON.parse(r.record) as SessionRecord);
    this.knownSessions = new Set(sessions.map((s) => s.tokenHash));
    return sessions;
  }

  saveSessions(sessions: SessionRecord[]): Promise<void> {
    this.assertOpen();
    const next = new Set(sessions.map((s) => s.tokenHash));
    return this.queue.run(async () => {
      const removed = [...this.knownSessions].filter((h) => !next.has(h));
      const added = sessions.filter((s) => !this.knownSessions.has(s.tokenHash));
      if (removed.length === 0 && added.length === 0) return;
      await this.transaction(async (client) => {
        if (removed.length > 0) await client.query(`DELETE FROM ${this.t.sessions} WHERE token_hash = ANY($1)`, [removed]);
        if (added.length > 0) {
          await client.query(
            `INSERT INTO ${this.t.sessions} (token_hash, record, expires)
               SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT (token_hash) DO NOTHING`,
            [added.map((s) => s.tokenHash), added.map((s) => JSON.stringify(s)), added.map((s) => s.expires)],
          );
        }
        await this.notify(client, { kind: 'sessions', origin: this.instanceId });
      });
      this.knownSessions = next;
    });
  }

  async getRuntimeConfig(): Promise<RuntimeConfig> {
    this.assertOpen();
    const { rows } = await this.query<{ config: string }>(`SELECT config FROM ${this.t.config} WHERE id = 1`);
    return JSON.parse(rows[0]!.config) as RuntimeConfig;
  }

  saveRuntimeConfig(config: RuntimeConfig): Promise<void> {
    this.assertOpen();
    const text = JSON.stringify(config);
    return this.queue.run(async () => {
      await this.query(`UPDATE ${this.t.config} SET config = $1 WHERE id = 1`, [text]);
    });
  }

  updateRuntimeConfig(change: (config: RuntimeConfig) => RuntimeConfig): Promise<RuntimeConfig> {
    this.assertOpen();
    return this.queue.run(() =>
      this.transaction(async (client) => {
        const { rows } = await client.query<{ config: string }>(`SELECT config FROM ${this.t.config} WHERE id = 1 FOR UPDATE`);
        const text = JSON.stringify(change(JSON.parse(rows[0]!.config) as RuntimeConfig));
        await client.query(`UPDATE ${this.t.config} SET config = $1 WHERE id = 1`, [text]);
        return JSON.parse(text) as RuntimeConfig;
      }),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.drain();
    this.relay.close();
    await this.feed.close();
    await this.pool.end();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('storage is closed');
  }

  /** `timeoutMs`: how long to wait for the answer (the pool's query timeout when omitted). */
  private query<R extends pg.QueryResultRow>(text: string, values?: unknown[], timeoutMs?: number): Promise<pg.QueryResult<R>> {
    return guarded(this.pool.query<R>(timeoutMs === undefined ? { text, values } : { text, values, query_timeout: timeoutMs } as pg.QueryConfig));
  }

  private async notify(client: pg.PoolClient, change: StorageChange): Promise<void> {
    await client.query('SELECT pg_notify($1, $2)', [this.channel, JSON.stringify(change)]);
  }

  /** `unknown`: the error when the connection is lost during COMMIT, when nobody can say whether it took. */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, unknown?: () => Error): Promise<T> {
    const client = await guarded(this.pool.connect());
    let broken = false;
    let committing = false;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      committing = true;
      await client.query('COMMIT');
      return result;
    } catch (e) {
      broken = isConnectionError(e);
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      if (broken && committing && unknown) throw unknown();
      throw unavailable(e);
    } finally {
      client.release(broken);
    }
  }
}
