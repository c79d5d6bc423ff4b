import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type pg from 'pg';
import { deploy, type Conf } from '../helpers/deploy.js';
import { query, startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';

/**
 * What a primary-only tab's nodes write to the cluster's database — global context and queue
 * messages — once the instance running it has lost the primary's lease without noticing yet (a
 * paused process, say): the database refuses it, while the same writes from another tab land. One
 * instance on PostgreSQL, with renewals minutes apart so that only the database knows.
 */

const SCHEMA = 'primary_only_writes';
// The first renewal is at start; the next is 290 s later: the test runs between the two.
const SLOW_RENEWALS = { leaseMs: 600_000, renewMs: 290_000, marginMs: 1500, checkMs: 2000 };

/** POST /<path> sets global `key` to msg.payload.n, puts the message on queue `jobs` and answers 202, or 503 with the refusal. */
const writer = (tab: string, path: string, key: string): Conf[] => {
  const n = (id: string, type: string, extra: Conf, wires: string[][] = [[]]): Conf => ({ id: `${tab}-${id}`, type, z: tab, x: 100, y: 100, wires: wires.map((w) => w.map((to) => `${tab}-${to}`)), ...extra });
  return [
    n('in', 'http in', { url: `/${path}`, method: 'post' }, [['set']]),
    n('set', 'function', { func: `global.set(${JSON.stringify(key)}, msg.payload.n); return msg;` }, [['out']]),
    n('out', 'queue out', { queue: 'jobs' }, [['ok']]),
    n('ok', 'change', { rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '202', tot: 'num' }] }, [['reply']]),
    n('refused', 'catch', { scope: [`${tab}-out`], uncaught: false }, [['fail']]),
    n('fail', 'change', { rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '503', tot: 'num' }, { t: 'set', p: 'payload', pt: 'msg', to: 'error.message', tot: 'msg' }] }, [['reply']]),
    n('reply', 'http response', {}),
  ];
};

const FLOWS: Conf[] = [
  { id: 'sched', type: 'tab', label: 'Scheduler', env: [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true', type: 'str' }] },
  ...writer('sched', 'sched', 'lastRun'),
  { id: 'web', type: 'tab', label: 'Web' },
  ...writer('web', 'web', 'hits'),
];

describe('primary-only tab writes on a deposed primary', { timeout: 120_000 }, () => {
  let db: TestPostgres;
  let server: TestServer;
  const sql = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => query<R>(db.url, text, values);
  const stored = async (key: string) => (await sql<{ value: string }>(`SELECT value FROM ${SCHEMA}.context WHERE scope = 'global' AND key = $1`, [key]))[0]?.value;
  const queued = async () => (await sql<{ body: string }>(`SELECT body FROM ${SCHEMA}.queue_messages WHERE queue = 'jobs' ORDER BY seq`)).map((r) => JSON.parse(r.body).payload.n as number);
  const post = (path: string, n: number) => request(server.at(path), { method: 'POST', json: { n } });

  before(async () => {
    db = await startPostgres();
    server = await startServer({
      storage: { type: 'postgres', url: db.url, schema: SCHEMA, cluster: SLOW_RENEWALS },
      contextStorage: { default: { module: 'postgres' } },
    });
    await deploy(server, FLOWS);
    // The scheduler tab runs once this instance is the primary.
    await eventually(async () => (await post('sched', 1)).status === 202, 10_000, 100);
  });
  after(async () => {
    await server?.dispose();
    await db?.dispose();
  });

  it('refuses the global context and queue messages of a primary-only tab once another instance holds the lease; the other tabs\' writes land', async () => {
    await eventually(async () => (await stored('lastRun')) === '1', 5000, 50);
    assert.deepEqual(await queued(), [1]);

    // Another instance takes the lease; this one's next renewal is minutes away, so it carries on.
    await sql(`UPDATE ${SCHEMA}.lease SET holder = 'elsewhere', epoch = epoch + 1, expires = now() + interval '10 minutes'`);
    const refused = await post('sched', 2);
    assert.equal(refused.status, 503, refused.text);
    assert.match(refused.text, /lease/);
    const global = server.instance.runtime.context.getGlobalContext();
    // Set to 2 here, refused by the database, and read back.
    await eventually(() => global.get('lastRun') === 1, 5000, 20);
    assert.equal(await stored('lastRun'), '1');

    assert.equal((await post('web', 3)).status, 202);
    await eventually(async () => (await stored('hits')) === '3', 5000, 50);
    assert.deepEqual(await queued(), [1, 3]);
    assert.ok(server.logs.some((l) => l.includes('Context of a primary-only tab not written')));
  });
});
