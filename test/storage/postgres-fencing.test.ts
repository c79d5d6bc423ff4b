import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { primaryOnlyScopes } from '../../src/runtime/config/primary-only.js';
import { ContextManager } from '../../src/runtime/context/context.js';
import type { ContextScope } from '../../src/runtime/context/context.js';
import { createPostgresStorage } from '../../src/storage/postgres/postgres-storage.js';
import type { Storage } from '../../src/storage/contract.js';
import { LeaseLostError } from '../../src/storage/lease-lost.js';
import { query, startPostgres, type TestPostgres } from '../helpers/postgres.js';
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
const DEFAULT_RENEWALS = { leaseMs: 5000, renewMs: 1000, marginMs: 1500, checkMs: 2000 };
const flows = [
  { id: 'sched', type: 'tab', env: [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true' }] },
  { id: 'tick', type: 'inject', z: 'sched' },
  { id: 'web', type: 'tab' },
  { id: 'in', type: 'http in', z: 'web' },
];

describe('postgres storage: primary-only writes carry the lease epoch', { timeout: 60_000 }, () => {
  let server: TestPostgres;
  const opened: Storage[] = [];
  const leaves: Array<() => Promise<void>> = [];

  const open = async (instanceId: string, schema = SCHEMA, cluster = SLOW_RENEWALS) => {
    const s = createPostgresStorage({ url: server.url, schema, poolSize: 2, cluster }, instanceId, captureLog().log);
    opened.push(s);
    await s.init();
    return s;
  };
  const sql = (text: string, values: unknown[] = []) => query(server.url, text, values);
  const stored = async (scope: string, key: string, schema = SCHEMA) =>
    ((await sql(`SELECT value FROM ${schema}.context WHERE scope = $1 AND key = $2`, [scope, key]))[0] as { value: string } | undefined)?.value;
  /** An instance of `flows` on storage `s`: its postgres context store, campaigning, and its role changes. */
  const instance = async (s: Storage) => {
    const shared = s.shared!;
    const context = new ContextManager({
      contextStorage: { default: { module: 'postgres' } },
      shared: { context: shared.context, onChange: (l) => shared.onChange(l), primaryOnly: primaryOnlyScopes(() => flows) },
      log: { warn: () => undefined },
    });
    await context.open();
    const roles: boolean[] = [];
    leaves.push(shared.campaign((primary) => void roles.push(primary)), () => context.close());
    return { roles, scheduler: context.getNodeContext('tick', 'sched').global, web: context.getNodeContext('in', 'web').global };
  };
  const set = (scope: ContextScope, key: string, value: unknown) => new Promise<Error | undefined>((resolve) => scope.set(key, value, (err) => resolve(err ?? undefined)));

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

  it('refuses what a deposed primary\'s primary-only tab sets in global context, while the new primary\'s global writes land and reach it', async () => {
    const schema = 'fencing_global';
    const old = await instance(await open('old', schema));
    await eventually(() => old.roles[0] === true, 10_000, 20);
    const next = await instance(await open('next', schema, DEFAULT_RENEWALS));
    assert.equal(await set(old.scheduler, 'lastRun', 'old-1'), undefined);
    assert.equal(await stored('global', 'lastRun', schema), '"old-1"');

    // The lease runs out on the server (old's renewals no longer arrive) and next takes it within a
    // renewal; old's own next renewal is 20 s away, so it still believes it is the primary.
    await sql(`UPDATE ${schema}.lease SET expires = now()`);
    await eventually(() => next.roles[0] === true, 10_000, 20);
    const refused = await set(old.scheduler, 'lastRun', 'old-2');
    assert.ok(refused instanceof LeaseLostError, String(refused));
    assert.deepEqual(old.roles, [true], 'the deposed primary had not stepped down: the database refused its write');
    assert.equal(await stored('global', 'lastRun', schema), '"old-1"');

    assert.equal(await set(next.scheduler, 'lastRun', 'next-1'), undefined);
    assert.equal(await stored('global', 'lastRun', schema), '"next-1"');
    await eventually(() => old.web.get('lastRun') === 'next-1', 5000, 20);
    assert.equal(await set(old.web, 'hits', 1), undefined, 'the deposed primary\'s other tabs still write global context');
    assert.equal(await stored('global', 'hits', schema), '1');
  });
});
