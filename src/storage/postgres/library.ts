import path from 'node:path';
import type pg from 'pg';
import { RunnelError } from '../../base/errors.js';
import type { LibraryListing } from '../file/library-files.js';

/**
 * The editor's library in the database, with the file backend's answers: an entry's text, or a
 * folder's listing (sub-folders, then files as `{fn, ...meta}`); meta is kept for non-flow types,
 * as strings, as the files' comment lines keep it.
 */

type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

function normalise(type: string, entry: string): string {
  if (!/^[\w-]+$/.test(type)) throw new RunnelError('invalid_request', 'A library type is letters, digits, _ and -');
  const p = path.posix.normalize(`/${entry}`).slice(1);
  return entry.endsWith('/') && p !== '' && !p.endsWith('/') ? `${p}/` : p;
}

export class Library {
  constructor(private readonly table: string, private readonly query: Query) {}

  async get(type: string, entry: string): Promise<string | LibraryListing> {
    const p = normalise(type, entry);
    const exact = await this.query<{ body: string }>(`SELECT body FROM ${this.table} WHERE type = $1 AND path = $2`, [type, p]);
    if (exact.rows[0]) return exact.rows[0].body;
    const prefix = p === '' || p.endsWith('/') ? p : `${p}/`;
    const { rows } = await this.query<{ path: string; meta: string }>(
      `SELECT path, meta FROM ${this.table} WHERE type = $1 AND left(path, length($2)) = $2 ORDER BY path`, [type, prefix],
    );
    if (rows.length === 0) {
      if (p === '' || entry.endsWith('/')) return [];
      throw new RunnelError('not_found', 'No such library entry');
    }
    const dirs = new Set<string>();
    const files: Record<string, unknown>[] = [];
    for (const row of rows) {
      const rest = row.path.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash >= 0) dirs.add(rest.slice(0, slash));
      else files.push({ ...(type === 'flows' ? {} : (JSON.parse(row.meta) as Record<string, unknown>)), fn: rest });
    }
    return [...[...dirs].sort(), ...files];
  }

  async save(type: string, entry: string, meta: Record<string, unknown>, body: string): Promise<void> {
    if (entry === '' || entry.endsWith('/')) throw new RunnelError('invalid_request', 'A library entry needs a file name');
    const p = normalise(type, entry);
    const kept: Record<string, string> = {};
    if (type !== 'flows') {
      for (const [key, value] of Object.entries(meta)) if (/^\w+$/.test(key) && value !== undefined) kept[key] = String(value).replace(/[\r\n]+/g, ' ');
    }
    await this.query(
      `INSERT INTO ${this.table} (type, path, meta, body) VALUES ($1, $2, $3, $4) ON CONFLICT (type, path) DO UPDATE SET meta = EXCLUDED.meta, body = EXCLUDED.body`,
      [type, p, JSON.stringify(kept), body],
    );
  }
}
