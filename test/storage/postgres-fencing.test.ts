import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createPostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import type { Storage } from '../../src/storage/contract.js';
import { LeaseLostError } from '../../src/storage/lease-lost.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { eventually } from '../helpers/server.js';
import { captureLog } from '../helpers/log.js';

/**
 * Fencing at the write: a primary-only context write carries the epoch of the lease its instance
 * holds, and the database refuses it once another instance holds the lease, even while the writer
 * still believes it is the primary (a process paused past its lease, say).
 */

const SCHEMA = 'fencing';
// Renewals far apart: the deposed primary has not noticed by the time it writes.
const SLOW_RENEWALS = { leaseMs: 60_000, renewMs: 20_000, marginMs: 1500, checkMs: 2000 };

describe('postgres storage: primary-only writes carry the lease epoch', { timeout: 60_000 }, () => {
  let server: TestPostgres;
  const opened: Storage[] = [];
  const leaves: Array<() => Promise<void>> = [];

  const open = async (instanceId: string) => {
    const s = createPostgresStorage({ url: server.url, schema: SCHEMA, poolSize: 2, cluster: SLOW_RENEWALS }, instanceId, captureLog().log);
    opened.push(s);
    await s.init();
    return s;
  };
  const sql = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client(server.url);
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const stored = async (scope: string, key: string) =>
    ((await sql(`SELECT value FROM ${SCHEMA}.context WHERE scope = $1 AND key = $2`, [scope, key]))[0] as { value: string } | undefined)?.value;

  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    for (const leave of leaves) await leave().catch(() => undefined);
    for (const s of opened) await s.close().catch(() => undefined);
    await server?.dispose();
  });

  it('refuses a deposed primary\'s primary-only write in the database, while it still believes it holds the lease; its other writes go through', async () => {
    const a = await open('a');
    const roles: boolean[] = [];
    leaves.push(a.shared!.campaign((primary) => void roles.push(primary)));
    await eventually(() => roles[0] === true, 10_000, 20);
    await a.shared!.context.write([{ scope: 'sched', key: 'lastRun', value: '1' }], true);
    assert.equal(await stored('sched', 'lastRun'), '1');

    // Another instance takes the lease: a's next renewal is 20 s away, so only the database knows.
    await sql(`UPDATE ${SCHEMA}.lease SET holder = 'b', epoch = epoch + 1, expires = now() + interval '1 minute'`);
    await assert.rejects(
      a.shared!.context.write([{ scope: 'sched', key: 'lastRun', value: '2' }, { scope: 'sched', key: 'other', value: '3' }], true),
      (e: Error) => e instanceof LeaseLostError && /passed to another instance or expired/.test(e.message),
    );
    assert.deepEqual(roles, [true], 'the writer had not stepped down: the database refused the write');
    assert.equal(await stored('sched', 'lastRun'), '1');
    assert.equal(await stored('sched', 'other'), undefined, 'nothing of the refused transaction is kept');
    await a.shared!.context.write([{ scope: 'global', key: 'g', value: '4' }]);
    assert.equal(await stored('global', 'g'), '4');
  });

  it('refuses a primary-only write at once on an instance that holds no lease', async () => {
    const c = await open('c');
    await assert.rejects(c.shared!.context.write([{ scope: 'sched', key: 'x', value: '1' }], true), (e: Error) => e instanceof LeaseLostError && /not the primary/.test(e.message));
    assert.equal(await stored('sched', 'x'), undefined);
  });
});
