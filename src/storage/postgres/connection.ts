import pg from 'pg';
import type { Logger } from '../../base/log.js';
import type { ClusterTimings } from '../../settings/cluster.js';

/** Connecting to the configured database, and saying which one without leaking the password. */

export interface PostgresConfig {
  url: string;
  schema: string;
  poolSize: number;
  /** Lease, renewal and liveness timings of the cluster (the defaults when absent). */
  cluster?: ClusterTimings;
}

/**
 * A transaction in progress on a connection that went silent keeps its row locks (the flows row)
 * until the server notices; with a stalled proxy between, its TCP keepalives never will.
 */
const IDLE_IN_TRANSACTION_MS = 10_000;

/** A connection attempt gives up after this long, so a dead host never hangs a start or a request. */
const CONNECT_TIMEOUT_MS = 5000;

/** The URL with its password replaced, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.href;
  } catch {
    return 'the configured database URL';
  }
}

/**
 * What a connection says it is in `pg_stat_activity.application_name`: `runnel/<instance>` for the
 * pool, with `/feed` or `/election` for the dedicated connections, so an operator (or a test) can
 * tell whose sessions hold a lock or should be terminated. PostgreSQL keeps 63 bytes of it.
 */
export function applicationName(instanceId: string, role?: 'feed' | 'election'): string {
  return role === undefined ? `runnel/${instanceId}` : `runnel/${instanceId}/${role}`;
}

export function createPool(config: PostgresConfig, log: Logger, name: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.url,
    application_name: name,
    max: config.poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // A statement on a connection whose server vanished without a word must not hang a request.
    query_timeout: 15_000,
    options: `-c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_MS}`,
  });
  // An idle client losing its server emits on the pool; a checked-out one on itself, and the pool
  // listens only while it is idle: unhandled, either would crash the process.
  const lost = (err: Error) => log.warn({ err: err.message }, 'PostgreSQL connection lost');
  pool.on('error', lost);
  pool.on('connect', (client) => client.on('error', lost));
  return pool;
}

/**
 * A dedicated connection (the change feed, the election). `statementTimeoutMs`: the server gives
 * up on a statement after this long, and its own socket after as long without an acknowledgement.
 */
export function createClient(config: PostgresConfig, name: string, statementTimeoutMs?: number): pg.Client {
  const options = statementTimeoutMs === undefined ? undefined : `-c statement_timeout=${statementTimeoutMs} -c tcp_user_timeout=${statementTimeoutMs}`;
  return new pg.Client({ connectionString: config.url, application_name: name, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true, options });
}

/** `"schema"`: names are validated by the settings (lower-case letters, digits, _), quoting keeps them exact. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Connection-level failures (as opposed to a statement the server refused). */
export function isConnectionError(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  if (typeof err?.code === 'string') {
    // 08: connection exception; 57P01-03: admin shutdown, crash shutdown, cannot connect now.
    if (err.code.startsWith('08') || /^57P0[1-3]$/.test(err.code)) return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(err.code)) return true;
  }
  return /Connection terminated|connection timeout|Query read timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(err?.message ?? '');
}
