import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { resolveSettings } from '../../src/settings/settings.js';
import { DEFAULT_CLUSTER_TIMINGS } from '../../src/settings/cluster.js';
import { createPostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import { createPool } from '../../src/storage/postgres/connection.js';
import { SCHEMA_VERSION } from '../../src/storage/postgres/migrations.js';
import type { Storage, StorageChange } from '../../src/storage/contract.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { runCli } from '../helpers/process.js';
import { eventually, tempDir } from '../helpers/server.js';
import { FLOWS_A, FLOWS_B, storageContract } from './contract.js';
import { queueContract } from './queue-contract.js';
import { historyContract } from './history-contract.js';
import { removeDir } from '../helpers/dirs.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import type { RunnelError } from '../../src/base/errors.js';
import { captureLog } from '../helpers/log.js';

/** One PostgreSQL server for this file; every test gets a schema of its own. */
let server: TestPostgres | undefined;
let schemas = 0;
const database = async () => (server ??= await startPostgres());
const newSchema = async () => {
  await database();
  return `t${process.pid}_${schemas++}`;
};
const open = (schema: string, instanceId = `i${schemas}`) =>
  createPostgresStorage({ url: server!.url, schema, poolSize: 4 }, instanceId, captureLog().log);

storageContract({ name: 'postgres', newPlace: newSchema, create: (schema) => open(schema) });
queueContract({ name: 'postgres', newPlace: newSchema, create: (schema) => open(schema) });
historyContract({
  name: 'postgres',
  newPlace: newSchema,
  create: (schema, max) => createPostgresStorage({ url: server!.url, schema, poolSize: 4 }, 'h', captureLog().log, max),
});
after(async () => server?.dispose());

describe('postgres storage', { timeout: 60_000 }, () => {
  const opened: Storage[] = [];
  const init = async (schema: string, instanceId?: string) => {
    const s = open(schema, instanceId);
    opened.push(s);
    await s.init();
    return s;
  };

  before(database);
  after(async () => {
    for (const s of opened) await s.close().catch(() => undefined);
  });

  it('migrates a new schema once when several instances start at the same time', async () => {
    const schema = await newSchema();
    await Promise.all([init(schema), init(schema), init(schema)]);
    const client = new pg.Client(server!.url);
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      assert.deepEqual(rows.map((r) => r.version), Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
      await client.query(`INSERT INTO "${schema}".migrations (version) VALUES (${SCHEMA_VERSION + 1})`);
    } finally {
      await client.end();
    }
    await assert.rejects(init(schema), (e: Error) =>
      e.message.includes(`the database schema "${schema}" is at version ${SCHEMA_VERSION + 1}, newer than this Runnel knows (${SCHEMA_VERSION}): upgrade Runnel`));
  });

  it('compares the rev in the database, not the one an instance last saw', async () => {
    const schema = await newSchema();
    const a = await init(schema, 'a');
    const b = await init(schema, 'b');
    const before = (await b.getFlows()).rev;
    await a.saveFlows({ flows: FLOWS_A, credentials: { $: 'x' }, expectedRev: before });
    await assert.rejects(b.saveFlows({ flows: FLOWS_B, credentials: null, expectedRev: before }), { code: 'version_mismatch', status: 409 });
    assert.deepEqual(await b.getFlows(), await a.getFlows());
  });

  it('serialises runtime config updates across instances', async () => {
    const schema = await newSchema();
    const instances = await Promise.all(['a', 'b', 'c'].map((id) => init(schema, id)));
    await Promise.all(Array.from({ length: 30 }, (_, i) =>
      instances[i % 3]!.updateRuntimeConfig((c) => ({ ...c, count: ((c.count as number | undefined) ?? 0) + 1 }))));
    assert.deepEqual(await instances[0]!.getRuntimeConfig(), { count: 30 });
  });

  it('tells the other instances (not itself) about a commit, with its rev and deployment type', async () => {
    const schema = await newSchema();
    const a = await init(schema, 'a');
    const b = await init(schema, 'b');
    const seenA: StorageChange[] = [];
    const seenB: StorageChange[] = [];
    a.shared!.onChange((c) => seenA.push(c));
    b.shared!.onChange((c) => seenB.push(c));
    const { rev } = await a.saveFlows({ flows: FLOWS_A, credentials: null, type: 'nodes' });
    await eventually(() => seenB.length === 1);
    assert.deepEqual(seenB, [{ kind: 'flows', rev, type: 'nodes', origin: 'a' }]);
    assert.deepEqual(await b.shared!.currentRev(), { rev, type: 'nodes' });
    await b.saveSessions([{ tokenHash: 'f'.repeat(64), username: 'u', client: 'c', scope: ['*'], expires: Date.now() + 60_000 }]);
    await eventually(() => seenA.length === 1);
    assert.deepEqual(seenA, [{ kind: 'sessions', origin: 'b' }]);
  });

  it('shares one module list with uploaded tarballs as bytes, and tells the other instances of each change', async () => {
    const schema = await newSchema();
    const a = await init(schema, 'a');
    const b = await init(schema, 'b');
    const seenB: StorageChange[] = [];
    b.shared!.onChange((c) => seenB.push(c));
    const bytes = Buffer.from([0x1f, 0x8b, 0, 1, 2, 255]);
    await a.shared!.modules.put('up', { source: 'tarball', version: '1.0.0', sets: {} }, bytes);
    await a.shared!.modules.put('local', { source: 'local', version: '2.0.0', sets: {}, path: '/x' });
    await eventually(() => seenB.length === 2);
    assert.deepEqual(seenB, [{ kind: 'modules', origin: 'a' }, { kind: 'modules', origin: 'a' }]);
    assert.deepEqual(await b.shared!.modules.list(), [
      { name: 'local', record: { source: 'local', version: '2.0.0', sets: {}, path: '/x' } },
      { name: 'up', record: { source: 'tarball', version: '1.0.0', sets: {} } },
    ]);
    assert.deepEqual(await b.shared!.modules.tarball('up'), bytes);
    assert.equal(await b.shared!.modules.tarball('local'), undefined);
    await b.shared!.modules.put('up', { source: 'tarball', version: '1.0.0', sets: { s: false } });
    assert.deepEqual(await a.shared!.modules.tarball('up'), bytes, 'a record change without bytes keeps them');
    await b.shared!.modules.put('up', { source: 'npm', version: '1.1.0', sets: {} }, null);
    assert.equal(await a.shared!.modules.tarball('up'), undefined);
    await b.shared!.modules.remove('local');
    assert.deepEqual((await a.shared!.modules.list()).map((e) => e.name), ['up']);
  });

  it('counts login failures of every instance: concurrent attempts on three instances admit only the limit', async () => {
    const schema = await newSchema();
    const instances = await Promise.all(['a', 'b', 'c'].map((id) => init(schema, id)));
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      instances[i % 3]!.loginFailures.countIf(['p', 'u'], 0, 1000 + i, (t) => (t.p?.length ?? 0) < 5)));
    assert.equal(results.filter((r) => r.recorded).length, 5);
    assert.equal((await instances[1]!.loginFailures.recent(['u'], 0)).u?.length, 5);
  });

  it('keeps the sessions another instance added when one instance saves its own list', async () => {
    const schema = await newSchema();
    const a = await init(schema, 'a');
    const b = await init(schema, 'b');
    const expires = Date.now() + 60_000;
    const session = (c: string) => ({ tokenHash: c.repeat(64), username: 'u', client: 'c', scope: ['*'], expires });
    await a.getSessions();
    await b.getSessions();
    await a.saveSessions([session('a')]);
    await b.saveSessions([session('b')]);
    await a.saveSessions([]);
    assert.deepEqual(await b.getSessions(), [session('b')]);
  });

  it('says deploy_outcome_unknown, without crashing, when the connection is lost during COMMIT, and takes a retry with the same rev once', async () => {
    const schema = await newSchema();
    await init(schema);
    const proxy = await startFaultProxy(server!.port);
    const s = createPostgresStorage({ url: proxy.urlFor(server!.url), schema, poolSize: 2 }, 'faulty', captureLog().log);
    opened.push(s);
    await s.init();
    const base = await s.getFlows();
    // A deferred trigger holds COMMIT for a while, so the connection can be reset in the middle of it.
    const admin = new pg.Client(server!.url);
    await admin.connect();
    await admin.query(`CREATE FUNCTION "${schema}".slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow AFTER UPDATE ON "${schema}".flows DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "${schema}".slow()`);
    try {
      const revision = { action: 'deploy' as const, type: 'full', time: 1, nodeCount: 0, summary: {} };
      const save = () => s.saveFlows({ flows: FLOWS_A, credentials: null, expectedRev: base.rev, revision });
      const first = save();
      setTimeout(() => proxy.reset(), 250);
      await assert.rejects(first, (e: RunnelError) => e.code === 'deploy_outcome_unknown' && e.status === 503);
      await admin.query(`DROP TRIGGER slow ON "${schema}".flows`);
      // It did commit: the retry changes nothing and answers the rev.
      const stored = await eventually(async () => (await s.getFlows().catch(() => undefined))?.rev !== base.rev, 5000);
      assert.ok(stored);
      const { rev } = await save();
      assert.equal(rev, (await s.getFlows()).rev);
      assert.equal((await s.listRevisions({ limit: 10 })).filter((r) => r.rev === rev).length, 1, 'one revision, not two');
    } finally {
      await admin.end();
      await proxy.close();
    }
  });

  it('catches up after losing the database: the feed reconnects and reports a resync', async () => {
    const schema = await newSchema();
    const a = await init(schema, 'a');
    const seen: StorageChange[] = [];
    a.shared!.onChange((c) => seen.push(c));
    await server!.stop();
    await assert.rejects(a.getFlows());
    await server!.start();
    await eventually(() => seen.some((c) => c.kind === 'resync'), 15_000);
    assert.deepEqual((await a.getFlows()).flows, []);
  });

  it('keeps an error listener on a pool client for its whole life: a checked-out client whose session ends between statements does not crash the process', async () => {
    const captured = captureLog();
    const pool = createPool({ url: server!.url, schema: 'unused', poolSize: 1 }, captured.log, 'runnel/pool-test');
    try {
      // Checked out and idle: the pool's own listener is off, as in a transaction between statements.
      const client = await pool.connect();
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // Not events.once: it listens for 'error' too, and would itself be the listener under test.
      const ended = new Promise<void>((resolve) => client.once('end', resolve));
      const admin = new pg.Client(server!.url);
      await admin.connect();
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await admin.end();
      await ended;
      assert.ok(captured.messages(40).includes('PostgreSQL connection lost'), captured.raw.join('\n'));
      client.release(true);
    } finally {
      await pool.end();
    }
  });
});

describe('postgres storage settings and start-up', { timeout: 60_000 }, () => {
  it('selects postgres from the settings, with RUNNEL_STORAGE_URL winning', () => {
    const url = 'postgresql://u:p@127.0.0.1:5432/db';
    assert.deepEqual(resolveSettings({ storage: { type: 'postgres', url } }, '/', undefined, {}).storage, { type: 'postgres', url, schema: 'runnel', poolSize: 10, cluster: DEFAULT_CLUSTER_TIMINGS });
    const fromEnv = resolveSettings({ storage: { type: 'postgres', url, schema: 'other', poolSize: 3 } }, '/', undefined, { RUNNEL_STORAGE_URL: 'postgres://e@h/x' });
    assert.deepEqual(fromEnv.storage, { type: 'postgres', url: 'postgres://e@h/x', schema: 'other', poolSize: 3, cluster: DEFAULT_CLUSTER_TIMINGS });
    const timed = resolveSettings({ storage: { type: 'postgres', url, cluster: { leaseMs: 3000, renewMs: 500, marginMs: 1000 } } }, '/', undefined, {});
    assert.deepEqual(timed.storage.type === 'postgres' && timed.storage.cluster, { leaseMs: 3000, renewMs: 500, marginMs: 1000, checkMs: 2000 });
    // The primary must get a renewal in before it would step down.
    assert.throws(() => resolveSettings({ storage: { type: 'postgres', url, cluster: { leaseMs: 2000, renewMs: 1000 } } }, '/', undefined, {}), /renewMs must be at most half/);
    assert.throws(() => resolveSettings({ storage: { type: 'postgres', url, cluster: { leaseSeconds: 5 } } }, '/', undefined, {}), /storage.cluster.leaseSeconds is not a setting/);
    assert.equal(resolveSettings({}, '/', undefined, { RUNNEL_STORAGE_URL: 'postgres://e@h/x' }).storage.type, 'postgres');
    assert.throws(() => resolveSettings({ storage: { type: 'postgres' } }, '/', undefined, {}), /storage\.url must be a postgresql:\/\//);
    assert.throws(() => resolveSettings({ storage: { type: 'postgres', url, schema: 'Bad-Name' } }, '/', undefined, {}), /storage.schema must be a schema name/);
    assert.throws(() => resolveSettings({ storage: { type: 'postgres', url, poolSize: 0 } }, '/', undefined, {}), /storage.poolSize must be an integer/);
  });

  it('stops with one clear line and exit 1 when the database is unreachable or missing', async () => {
    const pgServer = await database();
    const dir = await tempDir();
    try {
      const file = path.join(dir, 'settings.json');
      const start = async (url: string) => {
        await writeFile(file, JSON.stringify({ uiPort: 0, userDir: path.join(dir, 'u'), storage: { type: 'postgres', url } }));
        return runCli(['start', '--settings', file], { timeoutMs: 30_000 });
      };
      const down = await start('postgresql://runnel:secret-pw@127.0.0.1:1/postgres');
      assert.equal(down.code, 1);
      assert.match(down.stderr, /^runnel: cannot use the PostgreSQL database postgresql:\/\/runnel:\*\*\*@127\.0\.0\.1:1\/postgres: .*ECONNREFUSED.*\n$/);
      assert.doesNotMatch(down.stderr, /secret-pw/);
      const missing = await start(pgServer.url.replace(/\/postgres$/, '/no_such_db'));
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /^runnel: cannot use the PostgreSQL database .*: database "no_such_db" does not exist\n$/);
    } finally {
      await removeDir(dir);
    }
  });
});
