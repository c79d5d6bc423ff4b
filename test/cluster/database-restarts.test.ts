import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type pg from 'pg';
import type { ClusterInstance } from '../helpers/cluster.js';
import { query, type TestPostgres } from '../helpers/postgres.js';
import { assertNeverTwoPrimaries, faultedClusterSuite, longestSilence, reportingFlows as flows, type Reporter } from '../helpers/primary-reports.js';
import { eventually, request } from '../helpers/server.js';

/**
 * The database's side failing under a running cluster of three (each instance behind a fault
 * proxy, a primary-only tab reporting who is primary): PostgreSQL restarted while deploys arrive
 * every 200 ms, each instance's sessions terminated by `pg_terminate_backend`, and a COMMIT whose
 * answer is lost. Every deploy's answer must say truly what happened to it, and every instance end
 * on the stored rev. Slow (real processes and restarts).
 */

const FAILOVER_BOUND_MS = 10_000;
const CATCH_UP_BOUND_MS = 5000;
const DEPLOY_EVERY_MS = 200;
const RESTARTS = 3;

const v2 = { 'Runtime-API-Version': 'v2' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  marker: string;
  instance: string;
  rev: string;
  /** When the deploy was sent. */
  at: number;
  status: number;
  code?: string;
}

describe('cluster: PostgreSQL restarted or its sessions terminated under deploys', { timeout: 300_000 }, () => {
  // Every revision kept: the test counts how many times each deploy was saved.
  const suite = faultedClusterSuite('faults', { flowHistory: { max: 100_000 } });
  let db: TestPostgres;
  let nodes: ClusterInstance[];
  let reporter: Reporter;
  let token: string;

  /** One statement on a connection of the test's own, around the proxies. */
  const sql = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => query<R>(db.url, text, values);
  /** How many kept revisions serve each text (a deploy's marker). */
  const savedMarkers = async (): Promise<Map<string, number>> => {
    const counts = new Map<string, number>();
    for (const { flows: text } of await sql<{ flows: string }>('SELECT flows FROM faults.revisions')) {
      const fn = (JSON.parse(text) as Array<{ id: string; func?: string }>).find((n) => n.id === 'fn');
      const marker = /"([^"]*)"/.exec(fn?.func ?? '')?.[1];
      if (marker !== undefined) counts.set(marker, (counts.get(marker) ?? 0) + 1);
    }
    return counts;
  };
  const storedRev = async () => (await sql<{ rev: string }>('SELECT rev FROM faults.flows WHERE id = 1'))[0]!.rev;
  const revOf = async (n: ClusterInstance) => (await request(n.at('flows/state'), { token })).body.rev as string;
  const deploy = (n: ClusterInstance, text: string, rev?: string) =>
    request(n.at('flows'), { method: 'POST', token, headers: { ...v2, 'Runtime-Deployment-Type': 'nodes' }, json: { flows: flows(reporter.url, text), ...(rev ? { rev } : {}) } });
  const allOn = async (rev: string) => (await Promise.all(nodes.map(revOf))).every((r) => r === rev);
  const alive = () => {
    for (const n of nodes) assert.equal(n.process.child.exitCode, null, `${n.id} exited`);
  };

  before(async () => {
    ({ pg: db, nodes, reporter, token } = suite);
    // Each instance has checked the token once, while the database was up.
    for (const n of nodes) await eventually(async () => (await revOf(n)) === suite.rev, CATCH_UP_BOUND_MS);
  });

  it('answers 503 deploy_outcome_unknown when a COMMIT\'s answer is lost; once the instance has caught up, the same deploy again answers 409 and is saved once', async (t) => {
    const target = nodes.find((n) => n.id !== reporter.latest())!;
    const rev = await revOf(target);
    suite.proxies.get(target.id)!.loseAnswerTo('COMMIT');
    const first = await deploy(target, 'lost', rev);
    assert.equal(first.status, 503, first.text);
    assert.equal(first.body.code, 'deploy_outcome_unknown');
    const committed = await storedRev();
    assert.notEqual(committed, rev, 'the COMMIT reached the server');
    const lostAt = Date.now();
    await eventually(() => allOn(committed), CATCH_UP_BOUND_MS, 50);
    t.diagnostic(`every instance on the committed rev ${Date.now() - lostAt} ms after the deploy answered`);
    assert.equal((await request(target.at('text'))).text, 'lost');
    const retry = await deploy(target, 'lost', rev);
    assert.equal(retry.status, 409, retry.text);
    assert.equal(retry.body.code, 'version_mismatch');
    assert.equal((await savedMarkers()).get('lost'), 1);
    alive();
  });

  it('restarted PostgreSQL under a deploy every 200 ms: each deploy is saved once or not at all as its answer says, and every instance ends on the stored rev', async (t) => {
    const outcomes: Outcome[] = [];
    const inFlight = new Set<Promise<void>>();
    let stop = false;
    let sent = 0;
    const send = async (n: ClusterInstance, marker: string) => {
      let rev = '';
      const at = Date.now();
      try {
        rev = await revOf(n);
        const r = await deploy(n, marker, rev);
        outcomes.push({ marker, instance: n.id, rev, at, status: r.status, code: r.body?.code });
      } catch (e) {
        // No answer at all: the instance is gone.
        outcomes.push({ marker, instance: n.id, rev, at, status: 0, code: (e as Error).message });
      }
    };
    const load = (async () => {
      while (!stop) {
        const n = nodes[sent % nodes.length]!;
        const p = send(n, `d${sent++}`).finally(() => inFlight.delete(p));
        inFlight.add(p);
        await sleep(DEPLOY_EVERY_MS);
      }
    })();
    const restartsFrom = Date.now();
    let lastStart = 0;
    try {
      await sleep(1000);
      for (let i = 0; i < RESTARTS; i++) {
        // At the first restart one deploy is certainly inside its transaction: its link is stalled.
        const stalled = i === 0 ? suite.proxies.get(nodes[2]!.id)! : undefined;
        stalled?.blackhole();
        if (stalled) await sleep(DEPLOY_EVERY_MS * nodes.length + 300);
        await db.stop();
        stalled?.pass();
        await sleep(500);
        await db.start();
        lastStart = Date.now();
        await sleep(3000);
      }
    } finally {
      stop = true;
      await load;
      await Promise.all(inFlight);
    }
    const restartsTo = Date.now();
    alive();
    const by = (pred: (o: Outcome) => boolean) => outcomes.filter(pred);
    const unexpected = by((o) => !(o.status === 200 || (o.status === 409 && o.code === 'version_mismatch') || (o.status === 503 && ['storage_unavailable', 'deploy_outcome_unknown'].includes(o.code ?? ''))));
    assert.deepEqual(unexpected, [], 'every deploy answered success, a conflict, or a 503 saying what happened');
    const ok = by((o) => o.status === 200);
    const unknown = by((o) => o.code === 'deploy_outcome_unknown');
    t.diagnostic(`${outcomes.length} deploys: ${ok.length} saved, ${by((o) => o.status === 409).length} conflicts, ${by((o) => o.code === 'storage_unavailable').length} unavailable, ${unknown.length} unknown`);
    assert.ok(by((o) => o.status === 503).length > 0, 'the restarts were felt');
    assert.ok(ok.some((o) => o.at > lastStart), 'deploys succeed again after the last restart');

    const stored = await storedRev();
    await eventually(() => allOn(stored), CATCH_UP_BOUND_MS, 100);
    // A deploy whose outcome was unknown, sent again as it was: safe, whatever became of the first.
    for (const o of unknown) {
      const again = await deploy(nodes.find((n) => n.id === o.instance)!, o.marker, o.rev);
      assert.ok(again.status === 409 || again.status === 200, again.text);
    }
    const saved = await savedMarkers();
    for (const o of ok) assert.equal(saved.get(o.marker), 1, `${o.marker} answered 200 and must be saved once`);
    for (const o of by((o) => o.status === 409 || o.code === 'storage_unavailable')) assert.equal(saved.get(o.marker), undefined, `${o.marker} answered ${o.status} ${o.code} and must not be saved`);
    for (const o of unknown) assert.ok((saved.get(o.marker) ?? 0) <= 1, `${o.marker} saved twice`);
    const last = await storedRev();
    await eventually(() => allOn(last), CATCH_UP_BOUND_MS, 100);
    assertNeverTwoPrimaries(reporter.reports);
    const silence = longestSilence(reporter.reports, restartsFrom, restartsTo);
    t.diagnostic(`longest time without a primary during the restarts: ${silence} ms`);
    assert.ok(silence < FAILOVER_BOUND_MS, `no primary for ${silence} ms`);
  });

  it('terminating each instance\'s sessions (pool, change feed, election) in turn: it reconnects, follows the next deploy within the bound, and deploys again', async (t) => {
    const from = Date.now();
    for (const victim of nodes) {
      const other = nodes.find((n) => n !== victim)!;
      // Until its change feed's and its election's sessions were among those terminated (one may be reconnecting).
      const names = new Set<string>();
      await eventually(async () => {
        const killed = await sql<{ name: string }>(
          `SELECT application_name AS name FROM pg_stat_activity WHERE application_name LIKE $1 AND pg_terminate_backend(pid)`,
          [`runnel/${victim.id}%`],
        );
        for (const k of killed) names.add(k.name);
        return names.has(`runnel/${victim.id}/feed`) && names.has(`runnel/${victim.id}/election`);
      }, 5000, 100);
      const text = `after-${victim.id}`;
      const deployed = await deploy(other, text, await revOf(other));
      assert.equal(deployed.status, 200, deployed.text);
      const at = Date.now();
      await eventually(async () => (await request(victim.at('text'))).text === text, CATCH_UP_BOUND_MS, 50);
      t.diagnostic(`${victim.id} followed a deploy ${Date.now() - at} ms after its sessions were terminated`);
      const own = await deploy(victim, `by-${victim.id}`, await revOf(victim));
      assert.equal(own.status, 200, own.text);
      await eventually(() => allOn(own.body.rev), CATCH_UP_BOUND_MS, 50);
      await eventually(async () => (await sql(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1`, [`runnel/${victim.id}/election`])).length === 1, 5000);
    }
    alive();
    await sleep(2000);
    assertNeverTwoPrimaries(reporter.reports);
    const silence = longestSilence(reporter.reports, from, Date.now());
    t.diagnostic(`longest time without a primary: ${silence} ms`);
    assert.ok(silence < FAILOVER_BOUND_MS, `no primary for ${silence} ms`);
  });
});
