import type pg from 'pg';
import type { Revision, RevisionInfo, RevisionMeta } from '../contract.js';

/**
 * Revision history in the database: a revision is written in the same transaction as the flows it
 * records, and only the newest `max` are kept. `seq` comes from a sequence, so it is never reused.
 */

interface Row {
  seq: string;
  rev: string;
  prev_rev: string;
  meta: string;
  flows?: string;
  credentials?: string | null;
}

const INFO = 'seq, rev, prev_rev, meta';

function info(row: Row): RevisionInfo {
  return { ...(JSON.parse(row.meta) as RevisionMeta), seq: Number(row.seq), rev: row.rev, prevRev: row.prev_rev };
}

export class Revisions {
  constructor(private readonly table: string, private readonly max: number) {}

  /** Inside the transaction that saved (or read) the flows row. */
  async add(client: pg.PoolClient, entry: { rev: string; prevRev: string; meta: RevisionMeta; flows: string; credentials: string | null }): Promise<RevisionInfo> {
    const { rows } = await client.query<Row>(
      `INSERT INTO ${this.table} (rev, prev_rev, meta, flows, credentials) VALUES ($1, $2, $3, $4, $5) RETURNING ${INFO}`,
      [entry.rev, entry.prevRev, JSON.stringify(entry.meta), entry.flows, entry.credentials],
    );
    await client.query(`DELETE FROM ${this.table} WHERE seq <= $1`, [Number(rows[0]!.seq) - this.max]);
    return info(rows[0]!);
  }

  async list(query: (text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>, q: { limit: number; before?: number }): Promise<RevisionInfo[]> {
    const { rows } = await query(
      `SELECT ${INFO} FROM ${this.table} WHERE ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $1`,
      [q.limit, q.before ?? null],
    );
    return rows.map(info);
  }

  async get(query: (text: string, values: unknown[]) => Promise<pg.QueryResult<Row>>, ref: { seq: number } | { rev: string }): Promise<Revision | undefined> {
    const { rows } = 'seq' in ref
      ? await query(`SELECT ${INFO}, flows, credentials FROM ${this.table} WHERE seq = $1`, [ref.seq])
      : await query(`SELECT ${INFO}, flows, credentials FROM ${this.table} WHERE rev = $1 ORDER BY seq DESC LIMIT 1`, [ref.rev]);
    const row = rows[0];
    if (!row) return undefined;
    return { ...info(row), flows: JSON.parse(row.flows!), credentials: row.credentials ? JSON.parse(row.credentials) : null };
  }
}
