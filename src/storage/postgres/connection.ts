import pg from 'pg';
import type { Logger } from '../../base/log.js';

/** Connecting to the configured database, and saying which one without leaking the password. */

export interface PostgresConfig {
  url: string;
  schema: string;
  poolSize: number;
}

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

export function createPool(config: PostgresConfig, log: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolSize,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    // A statement on a connection whose server vanished without a word must not hang a request.
    query_timeout: 15_000,
  });
  // An idle client losing its server emits here; unhandled, it would crash the process.
  pool.on('error', (err) => log.warn({ err: err.message }, 'PostgreSQL connection lost'));
  return pool;
}

export function createClient(config: PostgresConfig): pg.Client {
  return new pg.Client({ connectionString: config.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
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
