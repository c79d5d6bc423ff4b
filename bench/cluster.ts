/**
 * The cluster section of `npm run bench`: three Runnel instances on one PostgreSQL (a throwaway
 * server, as the tests start it). Measures how long after the deploying instance's reply every
 * other instance serves the new flows (p50/p99, 100 and 10,000 nodes), and http-in requests per
 * second with 1, 2 and 3 instances behind a round-robin TCP balancer on the same machine, with
 * each instance's CPU use, and how long a debug message takes from one instance to an editor on
 * another (bench/cluster-watch.ts). On a machine with few cores the instances, the balancer, PostgreSQL and
 * the load generator share them, so throughput cannot scale with the instance count there.
 */
import { mkdir, rm } from 'node:fs/promises';
import { createServer, connect, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { benchConfig, withProbeBody } from './flows.js';
import { cannon } from './load.js';
import { percentile } from './stats.js';
import { cpuSeconds } from './systems.js';
import { debugLatency, SOCKET_IO_APP, socketIoLatency } from './cluster-watch.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { spawnRunnel, type RunnelProcess } from '../test/helpers/process.js';

const ROUNDS: Record<number, number> = { 100: 30, 10_000: 8 };
const LOAD_SECONDS = Number(process.env.RUNNEL_BENCH_CLUSTER_SECONDS ?? 10);

async function post(url: string, body: unknown, type = 'full'): Promise<number> {
  const res = await fetch(`${url}flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'Runtime-API-Version': 'v2', 'Runtime-Deployment-Type': type },
    body: JSON.stringify({ flows: body }),
  });
  if (res.status !== 200) throw new Error(`deploy failed: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  return Date.now();
}

/** Probe requests that got no answer within a second (an http-in request caught by the redeploy of its flow). */
let unanswered = 0;

/** Polls GET /probe until it answers `body`; resolves the time it first did. */
async function servedAt(url: string, body: string, deadline: number): Promise<number> {
  for (;;) {
    const res = await fetch(`${url}probe`, { signal: AbortSignal.timeout(1000) }).catch((e: Error) => {
      if (e.name === 'TimeoutError') unanswered++;
      return undefined;
    });
    const text = res ? await res.text().catch(() => '') : '';
    if (text === body) return Date.now();
    if (Date.now() > deadline) throw new Error(`${url} did not serve ${body} in time`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Round-robin by connection: each new client connection goes to the next instance. */
function balancer(ports: number[]): Promise<{ server: Server; port: number }> {
  let next = 0;
  const server = createServer((client) => {
    const upstream = connect(ports[next++ % ports.length]!, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port })));
}

async function main(): Promise<void> {
  const pg = await startPostgres();
  const root = path.join(os.tmpdir(), `runnel-bench-cluster-${process.pid}`);
  const instances: RunnelProcess[] = [];
  const lines: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    process.stdout.write(`${line}\n`);
  };
  try {
    for (let i = 0; i < 3; i++) {
      const dir = path.join(root, `n${i}`);
      await mkdir(dir, { recursive: true });
      instances.push(await spawnRunnel(dir, { storage: { type: 'postgres', url: pg.url, schema: 'bench' }, instanceId: `n${i}`, credentialSecret: 'bench', nodesDir: [SOCKET_IO_APP] }));
    }
    const urls = instances.map((p) => p.url);
    say(`## Cluster: 3 instances on one PostgreSQL (${os.availableParallelism()} cores, ${os.cpus()[0]?.model ?? 'unknown CPU'})`);
    say('');
    say('| nodes | rounds | deploy → every other instance serving, p50 | p99 | max |');
    say('|---|---|---|---|---|');
    for (const size of [100, 10_000]) {
      const config = benchConfig(size, '/probe', 'start');
      await post(urls[0]!, config.flows);
      for (const url of urls) await servedAt(url, 'start', Date.now() + 60_000);
      const lags: number[] = [];
      for (let round = 0; round < ROUNDS[size]!; round++) {
        const body = `r${size}-${round}`;
        const from = round % 3;
        const replied = await post(urls[from]!, withProbeBody(config, body), 'nodes');
        const others = urls.filter((_, i) => i !== from);
        const served = await Promise.all(others.map((u) => servedAt(u, body, replied + 30_000)));
        lags.push(Math.max(...served) - replied);
      }
      say(`| ${size.toLocaleString('en')} | ${lags.length} | ${percentile(lags, 50)} ms | ${percentile(lags, 99)} ms | ${Math.max(...lags)} ms |`);
      if (unanswered > 0) say(`(${unanswered} probe requests unanswered after 1 s and retried)`);
      unanswered = 0;
    }

    await post(urls[0]!, withProbeBody(benchConfig(3, '/probe', 'hello'), 'hello'));
    for (const url of urls) await servedAt(url, 'hello', Date.now() + 30_000);
    say('');
    say(`| instances behind the balancer | http-in req/s (${LOAD_SECONDS} s, 100 connections) | p99 | CPU per instance (% of one core) |`);
    say('|---|---|---|---|');
    for (const count of [1, 2, 3]) {
      const ports = urls.slice(0, count).map((u) => Number(new URL(u).port));
      const lb = await balancer(ports);
      const before = await Promise.all(instances.slice(0, count).map((p) => cpuSeconds(p.child.pid!)));
      const result = await cannon({ url: `http://127.0.0.1:${lb.port}/probe`, connections: 100, duration: LOAD_SECONDS, expectBody: 'hello' });
      const after = await Promise.all(instances.slice(0, count).map((p) => cpuSeconds(p.child.pid!)));
      lb.server.close();
      const cpu = after.map((a, i) => `${Math.round(((a - before[i]!) / LOAD_SECONDS) * 100)}%`).join(', ');
      say(`| ${count} | ${Math.round(result.rps).toLocaleString('en')} | ${result.p99} ms | ${cpu} |`);
      if (result.non2xx + result.errors + result.mismatches > 0) say(`(errors: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.mismatches} wrong bodies)`);
    }
    await debugLatency(urls, instances[0]!.child.pid!, LOAD_SECONDS, say);
    await socketIoLatency(urls, instances[0]!.child.pid!, LOAD_SECONDS, say);
  } finally {
    for (const p of instances) p.child.kill('SIGTERM');
    await Promise.all(instances.map((p) => p.exited));
    await pg.dispose();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench cluster: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
