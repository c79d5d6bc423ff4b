import type pg from 'pg';
import type { ContextEntry, SharedContext, StorageChange } from '../contract.js';
import { fencedTransaction, type LeaseRef } from './lease-fence.js';

/**
 * Context values in the database, one row per top-level key of a scope: per-key last writer wins.
 * A write notifies the other instances with the keys it touched, so their caches re-read them.
 */

/** NOTIFY payloads are limited to 8000 bytes: beyond this many keys, the whole scope is re-read. */
const MAX_NOTIFIED_KEYS = 50;

export interface ContextDb {
  table: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  notify(client: pg.PoolClient, change: StorageChange): Promise<void>;
  instanceId: string;
  /** The primary's lease, which primary-only writes are fenced by. */
  lease: LeaseRef;
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
      const work = async (client: pg.PoolClient) => {
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
      };
      await (primaryOnly ? fencedTransaction(db, work) : db.transaction(work));
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
