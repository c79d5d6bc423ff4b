/**
 * The cluster under network faults, measured over several rounds (`node dist/bench/failover.js`):
 * three instances on one throwaway PostgreSQL, each behind a fault proxy, and a primary-only tab
 * reporting who is primary to this process. For each fault of the primary's link (black hole, cut,
 * answers lost), the time until another instance's tab reports, and whether two primaries ever
 * overlapped; for a follower whose link black-holes during a deploy, the time from the link's
 * return until it serves the new flows; and how long GET /cluster takes on a faulted instance.
 * The bounds (docs/cluster.md): failover < 10 s, catch-up < 5 s, GET /cluster ≤ 100 ms.
 */
import os from 'node:os';
import { percentile } from './stats.js';
import { startCluster, type ClusterInstance } from '../test/helpers/cluster.js';
import { startFaultProxy, type FaultProxy } from '../test/helpers/fault-proxy.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { assertNeverTwoPrimaries, reportingFlows, startReporter } from '../test/helpers/primary-reports.js';
import { killRunnels } from '../test/helpers/process.js';
import { ADMIN_PASSWORD, eventually, request } from '../test/helpers/server.js';

const ROUNDS = Number(process.env.RUNNEL_BENCH_FAILOVER_ROUNDS ?? 5);
const FAULT_MS = 2000;
const SETTLE_MS = 3000;
const v2 = { 'Runtime-API-Version': 'v2' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Fault = 'blackhole' | 'cut' | 'muteAnswers';

async function main(): Promise<void> {
  const reporter = await startReporter();
  const pg = await startPostgres();
  const proxies = new Map<string, FaultProxy>();
  const perInstance: Record<string, Record<string, unknown>> = {};
  for (const id of ['node0', 'node1', 'node2']) {
    const proxy = await startFaultProxy(pg.port);
    proxies.set(id, proxy);
    perInstance[id] = { storage: { type: 'postgres', url: proxy.urlFor(pg.url), schema: 'bench' }, functionGlobalContext: { instance: id } };
  }
  const cluster = await startCluster(pg.url, 'bench', 3, {}, perInstance);
  const nodes = cluster.instances;
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const login = { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD };
    const token = (await request(nodes[0]!.at('auth/token'), { method: 'POST', json: login })).body.access_token as string;
    const deploy = (n: ClusterInstance, text: string) => request(n.at('flows'), { method: 'POST', token, headers: v2, json: { flows: reportingFlows(reporter.url, text) } });
    await deploy(nodes[0]!, 'start');
    await eventually(() => reporter.reports.length > 5, 10_000, 100);
    for (const n of nodes) await request(n.at('cluster'), { token });

    say(`## Cluster under network faults: 3 instances, one PostgreSQL, ${ROUNDS} rounds each (${os.availableParallelism()} cores, load average ${os.loadavg()[0]!.toFixed(1)})`);
    say('');
    say('| fault of the primary\'s link | new primary after, p50 | max | GET /cluster on the faulted instance, max |');
    say('|---|---|---|---|');
    for (const fault of ['blackhole', 'cut', 'muteAnswers'] as Fault[]) {
      const failovers: number[] = [];
      const views: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const old = reporter.latest();
        const proxy = proxies.get(old)!;
        const at = Date.now();
        proxy[fault]();
        try {
          await sleep(1000);
          const started = Date.now();
          await request(nodes.find((n) => n.id === old)!.at('cluster'), { token });
          views.push(Date.now() - started);
          const next = await eventually(() => reporter.reports.find((r) => r.time > at && r.instance !== old), 30_000, 20);
          failovers.push(next!.time - at);
          await sleep(FAULT_MS);
        } finally {
          proxy.pass();
        }
        await sleep(SETTLE_MS);
      }
      say(`| ${fault} | ${percentile(failovers, 50)} ms | ${Math.max(...failovers)} ms | ${Math.max(...views)} ms |`);
    }

    const catchUps: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const follower = nodes.find((n) => n.id !== reporter.latest())!;
      const deployer = nodes.find((n) => n !== follower)!;
      const proxy = proxies.get(follower.id)!;
      const text = `catch-up-${round}`;
      proxy.blackhole();
      let back = 0;
      try {
        await sleep(500);
        await deploy(deployer, text);
        await sleep(3000);
        back = Date.now();
      } finally {
        proxy.pass();
      }
      await eventually(async () => (await request(follower.at('text'))).text === text, 30_000, 20);
      catchUps.push(Date.now() - back);
    }
    say('');
    say(`Follower whose link black-holed during a deploy, serving the new flows after the link returns: p50 ${percentile(catchUps, 50)} ms, max ${Math.max(...catchUps)} ms.`);
    assertNeverTwoPrimaries(reporter.reports);
    say('Never two primaries at once in any round.');
  } finally {
    for (const p of proxies.values()) p.pass();
    await cluster.stop().catch(() => undefined);
    killRunnels();
    for (const p of proxies.values()) await p.close();
    await pg.dispose();
    reporter.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failover: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
