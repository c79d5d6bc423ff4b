import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skewedClock, startCluster, type ClusterInstance, type TestCluster } from '../helpers/cluster.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { assertNeverTwoPrimaries, reportingFlows as flows, startReporter, type Reporter } from '../helpers/primary-reports.js';
import { killRunnels } from '../helpers/process.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';

/**
 * Three instances, each reaching PostgreSQL through its own fault proxy, and a primary-only tab
 * that reports `{instance}` to this test's HTTP server (which the faults do not reach) ten times a
 * second. From those reports: who was primary when, so two primaries at once, and how long the
 * cluster went without one, can be measured. The instances' wall clocks disagree by a minute: only
 * the database's clock may matter. Slow (real processes, faults of several seconds).
 */

/** How far node1's and node2's wall clocks run ahead of and behind node0's. */
const SKEW_MS = 30_000;

const FAILOVER_BOUND_MS = 10_000;
const CATCH_UP_BOUND_MS = 5000;
const VIEW_BOUND_MS = 100;

const v2 = { 'Runtime-API-Version': 'v2' };
const loginBody = { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD };

describe('cluster under network faults between the instances and PostgreSQL', { timeout: 240_000 }, () => {
  let pg: TestPostgres;
  let cluster: TestCluster;
  let nodes: ClusterInstance[];
  const proxies = new Map<string, FaultProxy>();
  let reporter: Reporter;
  let reportUrl: string;
  let reports: Reporter['reports'];
  let token: string;

  before(async () => {
    reporter = await startReporter();
    ({ url: reportUrl, reports } = reporter);
    pg = await startPostgres();
    const perInstance: Record<string, Record<string, unknown>> = {};
    for (const id of ['node0', 'node1', 'node2']) {
      const proxy = await startFaultProxy(pg.port);
      proxies.set(id, proxy);
      perInstance[id] = { storage: { type: 'postgres', url: proxy.urlFor(pg.url), schema: 'faults' }, functionGlobalContext: { instance: id } };
    }
    cluster = await startCluster(pg.url, 'faults', 3, {}, perInstance, { node1: skewedClock(SKEW_MS), node2: skewedClock(-SKEW_MS) });
    nodes = cluster.instances;
    token = (await request(nodes[0]!.at('auth/token'), { method: 'POST', json: loginBody })).body.access_token;
    const deployed = await request(nodes[0]!.at('flows'), { method: 'POST', token, headers: v2, json: { flows: flows(reportUrl, 'one') } });
    assert.equal(deployed.status, 200, deployed.text);
    await eventually(() => reports.length > 5, 10_000, 100);
  });

  after(async () => {
    for (const p of proxies.values()) p.pass();
    await cluster?.stop().catch(() => undefined);
    killRunnels();
    for (const p of proxies.values()) await p.close();
    await pg?.dispose();
    reporter?.close();
  });

  const primaryNow = () => reporter.latest();
  const node = (id: string) => nodes.find((n) => n.id === id)!;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** The first report after `since` from another instance than `old`: when the next primary started. */
  const successorAfter = (old: string, since: number) => eventually(() => reports.find((r) => r.time > since && r.instance !== old), FAILOVER_BOUND_MS + 5000, 50);

  it('moves the primary within the bound, never to two at once, when its link black-holes; GET /cluster answers from memory meanwhile', async (t) => {
    // Each instance has checked the token once (a token from another instance is looked up in the database).
    for (const n of nodes) assert.equal((await request(n.at('cluster'), { token })).status, 200);
    const old = primaryNow();
    const faultAt = Date.now();
    proxies.get(old)!.blackhole();
    try {
      await sleep(1000);
      // Every instance, the faulted one too, answers its view at once and shows the lease epoch.
      for (const n of nodes) {
        const started = Date.now();
        const r = await request(n.at('cluster'), { token });
        const took = Date.now() - started;
        assert.equal(r.status, 200);
        assert.ok(took <= VIEW_BOUND_MS, `GET /cluster on ${n.id} took ${took} ms during the fault`);
        const instances = r.body.instances as Array<{ id: string; primary: boolean; epoch: number | null; lastSeen: string }>;
        assert.ok(instances.some((i) => i.primary && typeof i.epoch === 'number'), JSON.stringify(instances));
        for (const i of instances) assert.ok(!Number.isNaN(Date.parse(i.lastSeen)));
      }
      const next = (await successorAfter(old, faultAt))!;
      t.diagnostic(`new primary ${next.instance} ${next.time - faultAt} ms after ${old}'s link black-holed`);
      assert.ok(next.time - faultAt < FAILOVER_BOUND_MS);
      await sleep(2000);
    } finally {
      proxies.get(old)!.pass();
    }
    await sleep(3000);
    assertNeverTwoPrimaries(reports);
  });

  it('moves the primary within the bound, never to two at once, when its link is cut with a deploy arriving at it; the deploy answers 503', async (t) => {
    const old = primaryNow();
    const faultAt = Date.now();
    proxies.get(old)!.cut();
    try {
      await sleep(300);
      const deploying = request(node(old).at('flows'), { method: 'POST', token, headers: v2, json: { flows: flows(reportUrl, 'cut') } });
      const next = (await successorAfter(old, faultAt))!;
      t.diagnostic(`new primary ${next.instance} ${next.time - faultAt} ms after ${old}'s link was cut`);
      assert.ok(next.time - faultAt < FAILOVER_BOUND_MS);
      const answer = await deploying;
      assert.equal(answer.status, 503, answer.text);
      assert.ok(['storage_unavailable', 'deploy_outcome_unknown'].includes(answer.body.code), answer.text);
    } finally {
      proxies.get(old)!.pass();
    }
    await sleep(3000);
    assertNeverTwoPrimaries(reports);
  });

  it('moves the primary within the bound, never to two at once, when only the answers to it are lost (its statements still reach the database)', async (t) => {
    const old = primaryNow();
    const faultAt = Date.now();
    proxies.get(old)!.muteAnswers();
    try {
      const next = (await successorAfter(old, faultAt))!;
      t.diagnostic(`new primary ${next.instance} ${next.time - faultAt} ms after the answers to ${old} were lost`);
      assert.ok(next.time - faultAt < FAILOVER_BOUND_MS);
      await sleep(2000);
    } finally {
      proxies.get(old)!.pass();
    }
    await sleep(3000);
    assertNeverTwoPrimaries(reports);
  });

  it('brings a follower whose link black-holed during a deploy to the new rev within the bound once the link is back', async (t) => {
    const primary = primaryNow();
    const follower = nodes.find((n) => n.id !== primary)!;
    const deployer = nodes.find((n) => n !== follower)!;
    const before = (await request(follower.at('text'))).text;
    proxies.get(follower.id)!.blackhole();
    let back = 0;
    try {
      await sleep(500);
      const deployed = await request(deployer.at('flows'), { method: 'POST', token, headers: v2, json: { flows: flows(reportUrl, 'black') } });
      assert.equal(deployed.status, 200, deployed.text);
      await sleep(3000);
      assert.equal((await request(follower.at('text'))).text, before, 'the faulted follower keeps serving what it ran');
      back = Date.now();
    } finally {
      proxies.get(follower.id)!.pass();
    }
    await eventually(async () => (await request(follower.at('text'))).text === 'black', CATCH_UP_BOUND_MS, 50);
    t.diagnostic(`${follower.id} caught up ${Date.now() - back} ms after its link came back`);
    assertNeverTwoPrimaries(reports);
  });

  it('brings a follower whose link was cut during a deploy to the new rev within the bound once the link is back, though its LISTEN connection looks alive', async (t) => {
    const primary = primaryNow();
    const follower = nodes.find((n) => n.id !== primary)!;
    const deployer = nodes.find((n) => n.id !== primary && n !== follower)!;
    const before = (await request(follower.at('text'))).text;
    proxies.get(follower.id)!.cut();
    let back = 0;
    try {
      await sleep(500);
      const deployed = await request(deployer.at('flows'), { method: 'POST', token, headers: v2, json: { flows: flows(reportUrl, 'two') } });
      assert.equal(deployed.status, 200, deployed.text);
      await sleep(3000);
      assert.equal((await request(follower.at('text'))).text, before, 'the faulted follower keeps serving what it ran');
      back = Date.now();
    } finally {
      proxies.get(follower.id)!.pass();
    }
    await eventually(async () => (await request(follower.at('text'))).text === 'two', CATCH_UP_BOUND_MS, 50);
    t.diagnostic(`${follower.id} caught up ${Date.now() - back} ms after its link came back`);
    assertNeverTwoPrimaries(reports);
  });
});
