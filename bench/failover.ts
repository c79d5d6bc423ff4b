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
import type { ClusterInstance } from '../test/helpers/cluster.js';
import { assertNeverTwoPrimaries, reportingFlows, startFaultedCluster } from '../test/helpers/primary-reports.js';
import { eventually, request } from '../test/helpers/server.js';

const ROUNDS = Number(process.env.RUNNEL_BENCH_FAILOVER_ROUNDS ?? 5);
const FAULT_MS = 2000;
const SETTLE_MS = 3000;
const v2 = { 'Runtime-API-Version': 'v2' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Fault = 'blackhole' | 'cut' | 'muteAnswers';

async function main(): Promise<void> {
  const faulted = await startFaultedCluster('bench');
  const { nodes, proxies, reporter, token } = faulted;
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const deploy = (n: ClusterInstance, text: string) => request(n.at('flows'), { method: 'POST', token, headers: v2, json: { flows: reportingFlows(reporter.url, text) } });
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
    await faulted.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failover: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
