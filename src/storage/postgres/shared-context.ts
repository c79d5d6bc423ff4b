import type pg from 'pg';
import type { ContextEntry, SharedContext, StorageChange } from '../contract.js';
import { LeaseLostError } from '../lease-lost.js';

/**
 * Context values in the database, one row per top-level key of a scope: per-key last writer wins.
 * A write notifies the other instances with the keys it touched, so their caches re-read them.
 */

/** NOTIFY payloads are limited to 8000 bytes: beyond this many keys, the whole scope is re-read. */
const MAX_NOTIFIED_KEYS = 50;

/**
 * A primary-only write's transaction ends by locking the lease row for share: a takeover (which
 * updates the row) waits until the write has committed, and a write after a takeover finds another
 * holder or epoch and is rolled back. Held to the COMMIT's round trip; a transaction stranded on a
 * dead link is ended by the server after this long idle, so it cannot hold off a takeover.
 */
const FENCED_IDLE_MS = 1000;

export interface ContextDb {
  table: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  notify(client: pg.PoolClient, change: StorageChange): Promise<void>;
  instanceId: string;
  /** The lease table, and the epoch of the lease this instance holds (undefined when it holds none). */
  lease: { table: string; epoch(): number | undefined };
}

export function sharedContext(db: ContextDb): SharedContext {
  const t = db.table;
  return {
    async load() {
      return (await db.query<ContextEntry>(`SELECT scope, key, value FROM ${t}`)).rows;
    },
    async read(scope, keys) {
      if (keys === null) return (await db.query<ContextEntry>(`SELECT scope, key, value FROM ${t} WHERE scope = $1`, [scope])).rows;
      return (await db.query<ContextEntry>(`SELECT scope, key, value FROM ${t} WHERE scope = $1 AND key = ANY($2)`, [scope, keys])).rows;
    },
    async write(changes, primaryOnly = false) {
      if (changes.length === 0) return;
      const epoch = db.lease.epoch();
      if (primaryOnly && epoch === undefined) throw new LeaseLostError('this instance is not the primary');
      await db.transaction(async (client) => {
        if (primaryOnly) await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${FENCED_IDLE_MS}`);
        const puts = changes.filter((c) => c.value !== undefined);
        const dels = changes.filter((c) => c.value === undefined);
        if (puts.length > 0) {
          await client.query(
            `INSERT INTO ${t} (scope, key, value) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
               ON CONFLICT (scope, key) DO UPDATE SET value = EXCLUDED.value`,
            [puts.map((c) => c.scope), puts.map((c) => c.key), puts.map((c) => c.value)],
          );
        }
        if (dels.length > 0) {
          await client.query(`DELETE FROM ${t} t USING unnest($1::text[], $2::text[]) AS d(scope, key) WHERE t.scope = d.scope AND t.key = d.key`,
            [dels.map((c) => c.scope), dels.map((c) => c.key)]);
        }
        const byScope = new Map<string, string[]>();
        for (const c of changes) byScope.set(c.scope, [...(byScope.get(c.scope) ?? []), c.key]);
        for (const [scope, keys] of byScope) {
          await db.notify(client, { kind: 'context', scope, keys: keys.length > MAX_NOTIFIED_KEYS ? null : keys, origin: db.instanceId });
        }
        if (!primaryOnly) return;
        const { rowCount } = await client.query(
          `SELECT 1 FROM ${db.lease.table} WHERE id = 1 AND holder = $1 AND epoch = $2 AND expires > clock_timestamp() FOR SHARE`,
          [db.instanceId, epoch],
        );
        if (rowCount !== 1) throw new LeaseLostError(`the primary's lease (epoch ${epoch}) has passed to another instance or expired`);
      });
    },
    async deleteScope(scope) {
      await db.transaction(async (client) => {
        await client.query(`DELETE FROM ${t} WHERE scope = $1`, [scope]);
        await db.notify(client, { kind: 'context', scope, keys: null, origin: db.instanceId });
      });
    },
    async clean(activeIds) {
      await db.query(`DELETE FROM ${t} WHERE scope <> 'global' AND NOT (split_part(scope, ':', 1) = ANY($1))`, [activeIds]);
    },
  };
}
