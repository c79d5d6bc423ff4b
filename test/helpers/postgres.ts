import { execFile, spawnSync } from 'node:child_process';
import { chown, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { removeDir, tempDir } from './dirs.js';
import { withFreePort } from './ports.js';

/**
 * A throwaway PostgreSQL server for tests: Debian's `postgresql` package binaries (installed by
 * .ci/run), a fresh cluster in a temp dir, listening on 127.0.0.1 on a free port, trust auth for
 * the user `runnel`. PostgreSQL refuses to run as root, and CI runs as root: then the cluster
 * belongs to the `postgres` user (or `nobody`) and every command runs through `runuser`.
 * Missing binaries fail the test with what to install; nothing is skipped.
 */

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

export interface TestPostgres {
  /** `postgresql://runnel@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  /** Stops the server (fast shutdown); `start()` brings it back on the same port and data. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its data. */
  dispose(): Promise<void>;
}

async function binDir(): Promise<string> {
  const versions = await readdir(PG_ROOT).catch(() => [] as string[]);
  const usable: number[] = [];
  for (const v of versions) {
    if (!/^\d+$/.test(v)) continue;
    if (await stat(path.join(PG_ROOT, v, 'bin', 'initdb')).then(() => true, () => false)) usable.push(Number(v));
  }
  if (usable.length === 0) {
    throw new Error(`PostgreSQL binaries not found under ${PG_ROOT}/<version>/bin: install Debian's postgresql package (apt-get install -y postgresql), as .ci/run does`);
  }
  return path.join(PG_ROOT, String(Math.max(...usable)), 'bin');
}

/** The unprivileged account that owns the cluster when we are root. */
function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (r.status === 0 && g.status === 0) return { name, uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
  }
  throw new Error('running as root and neither the postgres nor the nobody account exists to run PostgreSQL');
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = await binDir();
  const user = serverUser();
  const root = await tempDir('runnel-pg-');
  if (user) await chown(root, user.uid, user.gid);
  const data = path.join(root, 'data');
  const logFile = path.join(root, 'server.log');
  const as = (cmd: string, args: string[]): [string, string[]] =>
    user ? ['runuser', ['-u', user.name, '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
  const exec = async (cmd: string, args: string[]) => {
    const [file, argv] = as(cmd, args);
    try {
      await run(file, argv, { cwd: root, timeout: 60_000 });
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`${cmd} failed: ${err.stderr || err.message}`);
    }
  };
  await exec('initdb', ['-D', data, '-U', 'runnel', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  let port = 0;
  // Tests need no durability: fsync off makes each commit cheap on a busy machine.
  const options = () => `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
  const pgCtl = (action: string, extra: string[] = []) => exec('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', ...extra, action]);
  let running = false;
  const start = async () => {
    // pg_ctl only says "could not start server"; why (a taken port, say) is in the server's log.
    await pgCtl('start', ['-o', options()]).catch(async (e: Error) => {
      throw new Error(`${e.message}\n${await readFile(logFile, 'utf8').catch(() => '')}`);
    });
    running = true;
  };
  const stop = async () => {
    if (!running) return;
    running = false;
    await pgCtl('stop', ['-m', 'fast']);
  };
  // A test file that dies must not leave a server behind.
  const onExit = () => {
    if (!running) return;
    const [file, argv] = as('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    spawnSync(file, argv, { stdio: 'ignore' });
  };
  process.once('exit', onExit);
  // PostgreSQL must be told its port: one taken since the probe fails the start with "Address
  // already in use" in the log, and it starts again on another (withFreePort). A restart (`start()`)
  // keeps the port, as clients hold the URL.
  await withFreePort(async (free) => {
    port = free;
    await start();
  });
  return {
    url: `postgresql://runnel@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    dispose: async () => {
      await stop();
      process.removeListener('exit', onExit);
      await removeDir(root);
    },
  };
}

/** One statement on a connection of the test's own (around any proxy an instance goes through), closed after it. */
export async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
