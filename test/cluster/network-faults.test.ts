import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { skewedClock, type ClusterInstance } from '../helpers/cluster.js';
import { assertNeverTwoPrimaries, faultedClusterSuite, reportingFlows as flows } from '../helpers/primary-reports.js';
import { eventually, request } from '../helpers/server.js';

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

describe('cluster under network faults between the instances and PostgreSQL', { timeout: 240_000 }, () => {
  const suite = faultedClusterSuite('faults', {}, { node1: skewedClock(SKEW_MS), node2: skewedClock(-SKEW_MS) });
  const reports = () => suite.reporter.reports;
  const primaryNow = () => suite.reporter.latest();
  const node = (id: string) => suite.nodes.find((n) => n.id === id)!;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** The first report after `since` from another instance than `old`: when the next primary started. */
  const successorAfter = (old: string, since: number) => eventually(() => reports().find((r) => r.time > since && r.instance !== old), FAILOVER_BOUND_MS + 5000, 50);
  const deploy = (n: ClusterInstance, text: string) => request(n.at('flows'), { method: 'POST', token: suite.token, headers: v2, json: { flows: flows(suite.reporter.url, text) } });

  /**
   * Puts `fault` on the primary's link and, alongside, runs `during`: a new primary must report
   * within the bound, and both run two more seconds with the fault still on, then one with it off
   * (the old primary's late reports would have come by then), without ever two primaries at once.
   */
  async function failover(t: TestContext, fault: 'blackhole' | 'cut' | 'muteAnswers', during: (old: string, faultAt: number) => Promise<void> = async () => undefined): Promise<void> {
    const old = primaryNow();
    const faultAt = Date.now();
    suite.proxies.get(old)![fault]();
    try {
      const [next] = await Promise.all([successorAfter(old, faultAt), during(old, faultAt)]);
      t.diagnostic(`new primary ${next!.instance} ${next!.time - faultAt} ms after ${old}'s link: ${fault}`);
      assert.ok(next!.time - faultAt < FAILOVER_BOUND_MS);
      await sleep(2000);
    } finally {
      suite.proxies.get(old)!.pass();
    }
    await sleep(3000);
    assertNeverTwoPrimaries(reports());
  }

  /**
   * Puts `fault` on a follower's link while another follower deploys `text`: the faulted one keeps
   * serving what it ran, and runs `text` within the bound once its link is back.
   */
  async function followerCatchesUp(t: TestContext, fault: 'blackhole' | 'cut', text: string): Promise<void> {
    const primary = primaryNow();
    const [follower, deployer] = suite.nodes.filter((n) => n.id !== primary) as [ClusterInstance, ClusterInstance];
    const before = (await request(follower.at('text'))).text;
    suite.proxies.get(follower.id)![fault]();
    let back = 0;
    try {
      await sleep(500);
      const deployed = await deploy(deployer, text);
      assert.equal(deployed.status, 200, deployed.text);
      // Every instance with a working link runs the deploy by now; the faulted one heard nothing of it.
      for (const n of suite.nodes.filter((n) => n !== follower)) await eventually(async () => (await request(n.at('text'))).text === text, CATCH_UP_BOUND_MS, 50);
      assert.equal((await request(follower.at('text'))).text, before, 'the faulted follower keeps serving what it ran');
      back = Date.now();
    } finally {
      suite.proxies.get(follower.id)!.pass();
    }
    await eventually(async () => (await request(follower.at('text'))).text === text, CATCH_UP_BOUND_MS, 50);
    t.diagnostic(`${follower.id} caught up ${Date.now() - back} ms after its link came back`);
    assertNeverTwoPrimaries(reports());
  }

  type Member = { id: string; primary: boolean; epoch: number | null; lastSeen: string };
  /**
   * `n`'s GET /cluster, asserted to answer within the bound with each member's last contact (every
   * instance with `all`: an instance silent for 5 s leaves the others' lists).
   */
  async function view(n: ClusterInstance, all = false): Promise<Member[]> {
    const started = Date.now();
    const r = await request(n.at('cluster'), { token: suite.token });
    const took = Date.now() - started;
    assert.equal(r.status, 200);
    assert.ok(took <= VIEW_BOUND_MS, `GET /cluster on ${n.id} took ${took} ms during the fault`);
    const members = r.body.instances as Member[];
    if (all) assert.deepEqual(members.map((m) => m.id), suite.nodes.map((m) => m.id));
    for (const m of members) assert.ok(!Number.isNaN(Date.parse(m.lastSeen)), JSON.stringify(m));
    for (const m of members) assert.equal(typeof m.epoch === 'number', m.primary, `a primary, and only a primary, shows its lease epoch: ${JSON.stringify(m)}`);
    return members;
  }
  /** The lease epoch every instance shows for `primary`, once each shows it. */
  const epochShown = (primary: string) => eventually(async () => {
    const seen = new Set<number>();
    for (const n of suite.nodes) for (const m of await view(n)) if (m.id === primary && m.primary) seen.add(m.epoch!);
    return seen.size === 1 ? [...seen][0] : undefined;
  }, 5000, 100);

  /**
   * GET /cluster on every instance, the faulted one too, during `old`'s fault: from memory within
   * the bound; once the next primary reports, every instance with a working link shows it with a
   * higher epoch, and the faulted one answers as fast.
   */
  async function viewsDuring(old: string, faultAt: number, epochBefore: number): Promise<void> {
    await sleep(1000);
    for (const n of suite.nodes) await view(n, true);
    const next = await successorAfter(old, faultAt);
    const epoch = await eventually(async () => {
      const shown = new Set<number>();
      for (const n of suite.nodes.filter((n) => n.id !== old)) for (const m of await view(n)) if (m.id === next!.instance && m.primary) shown.add(m.epoch!);
      return shown.size === 1 && [...shown][0]! > epochBefore ? [...shown][0] : undefined;
    }, 5000, 100);
    assert.ok(epoch! > epochBefore);
    assert.equal((await view(node(old))).find((m) => m.id === old)!.primary, false, `${old} no longer says it is the primary`);
  }

  it('moves the primary within the bound, never to two at once, when its link black-holes; GET /cluster answers from memory meanwhile and shows the new epoch', async (t) => {
    const before = await epochShown(primaryNow());
    await failover(t, 'blackhole', (old, faultAt) => viewsDuring(old, faultAt, before!));
  });

  it('moves the primary within the bound, never to two at once, when its link is cut with a deploy arriving at it; the deploy answers 503; GET /cluster answers from memory meanwhile', async (t) => {
    const before = await epochShown(primaryNow());
    await failover(t, 'cut', async (old, faultAt) => {
      await Promise.all([
        viewsDuring(old, faultAt, before!),
        (async () => {
          await sleep(300);
          const answer = await deploy(node(old), 'cut');
          assert.equal(answer.status, 503, answer.text);
          assert.ok(['storage_unavailable', 'deploy_outcome_unknown'].includes(answer.body.code), answer.text);
        })(),
      ]);
    });
  });

  it('moves the primary within the bound, never to two at once, when only the answers to it are lost (its statements still reach the database)', async (t) => {
    await failover(t, 'muteAnswers');
  });

  it('brings a follower whose link black-holed during a deploy to the new rev within the bound once the link is back', async (t) => {
    await followerCatchesUp(t, 'blackhole', 'black');
  });

  it('brings a follower whose link was cut during a deploy to the new rev within the bound once the link is back, though its LISTEN connection looks alive', async (t) => {
    await followerCatchesUp(t, 'cut', 'two');
  });
});
