import type pg from 'pg';
import type { Logger } from '../../base/log.js';
import { revOf } from '../rev.js';
import { quoteIdent } from './connection.js';

/**
 * Versioned schema migrations. Each entry moves the schema one version forward; the versions
 * applied are recorded in `<schema>.migrations`. They run in one transaction under an advisory
 * lock, so instances starting together apply each migration exactly once and a half-applied
 * migration cannot exist. A database newer than this code is refused rather than guessed at.
 */

type Migration = (schema: string) => string;

const MIGRATIONS: Migration[] = [
  (s) => `
    CREATE TABLE ${s}.flows (
      id int PRIMARY KEY CHECK (id = 1),
      rev text NOT NULL,
      flows text NOT NULL,
      credentials text,
      deployment_type text NOT NULL DEFAULT 'full',
      origin text,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO ${s}.flows (id, rev, flows) VALUES (1, '${revOf([])}', '[]');
    CREATE TABLE ${s}.sessions (
      token_hash text PRIMARY KEY,
      seq bigserial NOT NULL,
      record text NOT NULL,
      expires bigint NOT NULL
    );
    CREATE TABLE ${s}.runtime_config (
      id int PRIMARY KEY CHECK (id = 1),
      config text NOT NULL
    );
    INSERT INTO ${s}.runtime_config (id, config) VALUES (1, '{}');
  `,
  (s) => `
    CREATE TABLE ${s}.instances (
      id text PRIMARY KEY,
      info text NOT NULL,
      last_seen timestamptz NOT NULL DEFAULT now()
    );
  `,
  (s) => `
    CREATE TABLE ${s}.context (
      scope text NOT NULL,
      key text NOT NULL,
      value text NOT NULL,
      PRIMARY KEY (scope, key)
    );
  `,
  (s) => `
    CREATE TABLE ${s}.revisions (
      seq bigserial PRIMARY KEY,
      rev text NOT NULL,
      prev_rev text NOT NULL,
      meta text NOT NULL,
      flows text NOT NULL,
      credentials text
    );
    CREATE INDEX ON ${s}.revisions (rev, seq DESC);
    CREATE TABLE ${s}.user_settings (username text PRIMARY KEY, settings text NOT NULL);
    CREATE TABLE ${s}.library (type text NOT NULL, path text NOT NULL, meta text NOT NULL, body text NOT NULL, PRIMARY KEY (type, path));
  `,
  (s) => `
    CREATE TABLE ${s}.modules (name text PRIMARY KEY, record text NOT NULL, tarball bytea);
  `,
  (s) => `
    CREATE TABLE ${s}.login_failures (id bigserial PRIMARY KEY, key text NOT NULL, at bigint NOT NULL);
    CREATE INDEX ON ${s}.login_failures (key, at);
    CREATE INDEX ON ${s}.login_failures (at);
  `,
  // The primary's lease (election.ts): expiry on the database's clock, epoch raised at every new term.
  (s) => `
    CREATE TABLE ${s}.lease (
      id int PRIMARY KEY CHECK (id = 1),
      holder text,
      epoch bigint NOT NULL DEFAULT 0,
      expires timestamptz NOT NULL DEFAULT '-infinity'
    );
    INSERT INTO ${s}.lease (id) VALUES (1);
  `,
  // Durable queues (queues.ts): a key's messages are found in order by the partial index.
  (s) => `
    CREATE TABLE ${s}.queue_messages (
      seq bigserial PRIMARY KEY,
      queue text NOT NULL,
      id text NOT NULL,
      key text,
      body text NOT NULL,
      attempts int NOT NULL DEFAULT 0,
      enqueued_at timestamptz NOT NULL DEFAULT now(),
      visible_at timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz
    );
    CREATE INDEX ON ${s}.queue_messages (queue, seq);
    CREATE INDEX ON ${s}.queue_messages (queue, key, seq) WHERE key IS NOT NULL;
  `,
  // Projects (projects.ts): each repository's refs, the bundles of objects each save added, and the active project.
  (s) => `
    CREATE TABLE ${s}.projects (
      name text PRIMARY KEY,
      version bigint NOT NULL,
      refs text NOT NULL,
      head text NOT NULL,
      config text NOT NULL,
      entry text NOT NULL
    );
    CREATE TABLE ${s}.projects_bundles (
      name text NOT NULL REFERENCES ${s}.projects (name) ON DELETE CASCADE,
      version bigint NOT NULL,
      bundle bytea NOT NULL,
      PRIMARY KEY (name, version)
    );
    CREATE TABLE ${s}.projects_state (id int PRIMARY KEY CHECK (id = 1), active text);
    INSERT INTO ${s}.projects_state (id) VALUES (1);
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Arbitrary constant: the advisory-lock namespace of Runnel's migrations (second key: the schema). */
const LOCK_NAMESPACE = 0x52756e;

export async function migrate(pool: pg.Pool, schema: string, log: Logger): Promise<void> {
  const s = quoteIdent(schema);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_NAMESPACE, schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${s}.migrations`);
    const current = rows[0]?.v ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(`the database schema "${schema}" is at version ${current}, newer than this Runnel knows (${SCHEMA_VERSION}): upgrade Runnel`);
    }
    for (let v = current + 1; v <= SCHEMA_VERSION; v++) {
      await client.query(MIGRATIONS[v - 1]!(s));
      await client.query(`INSERT INTO ${s}.migrations (version) VALUES ($1)`, [v]);
    }
    await client.query('COMMIT');
    if (current < SCHEMA_VERSION) log.info({ schema, from: current, to: SCHEMA_VERSION }, 'PostgreSQL schema migrated');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}
