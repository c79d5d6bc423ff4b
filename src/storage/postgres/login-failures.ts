import type pg from 'pg';
import type { LoginFailures } from '../contract.js';

/**
 * Login failures of every instance in one table, so a throttle limit holds across the cluster.
 * A counted attempt locks its keys (transaction advisory locks, taken in one order so two
 * attempts cannot deadlock), so attempts sent to several instances at once cannot all pass.
 */

/** Arbitrary constant: the advisory-lock namespace of login throttling (second key: the key's hash). */
const LOCK_NAMESPACE = 0x52756f;

export interface FailuresDb {
  table: string;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
}

type Row = { key: string; at: string };

async function read(query: (text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>, table: string, keys: string[], since: number): Promise<Record<string, number[]>> {
  const { rows } = await query(`SELECT key, at FROM ${table} WHERE key = ANY($1) AND at > $2 ORDER BY at, id`, [keys, since]);
  const out: Record<string, number[]> = {};
  for (const r of rows) (out[r.key] ??= []).push(Number(r.at));
  return out;
}

export function loginFailures(db: FailuresDb): LoginFailures {
  const t = db.table;
  return {
    recent: (keys, since) => read((text, values) => db.query<Row>(text, values), t, keys, since),
    countIf: (keys, since, now, admit) =>
      db.transaction(async (client) => {
        const { rows } = await client.query<{ h: number }>('SELECT DISTINCT hashtext(k) AS h FROM unnest($1::text[]) AS k ORDER BY h', [keys]);
        for (const { h } of rows) await client.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NAMESPACE, h]);
        const times = await read((text, values) => client.query<Row>(text, values), t, keys, since);
        if (!admit(times)) return { recorded: false, times };
        const unique = [...new Set(keys)];
        await client.query(`INSERT INTO ${t} (key, at) SELECT k, $2 FROM unnest($1::text[]) AS k`, [unique, now]);
        return { recorded: true, times };
      }),
    async forgive(pop, clear) {
      await db.transaction(async (client) => {
        if (pop.length > 0) await client.query(`DELETE FROM ${t} WHERE id IN (SELECT max(id) FROM ${t} WHERE key = ANY($1) GROUP BY key)`, [pop]);
        if (clear.length > 0) await client.query(`DELETE FROM ${t} WHERE key = ANY($1)`, [clear]);
      });
    },
    async prune(before) {
      await db.query(`DELETE FROM ${t} WHERE at <= $1`, [before]);
    },
  };
}
