/**
 * The load-generating process. The harness forks it per measurement so that autocannon's own
 * CPU use never shares an event loop with the harness; it receives one job over IPC, answers
 * with the result and exits.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { CannonJob, CannonResult, LoadJob, LoadResult, ProbeJob, ProbeResult } from './load-jobs.js';
import { percentile } from './stats.js';

function loginRequests(rotate: NonNullable<CannonJob['rotateLogins']>): autocannon.Request[] {
  let next = 0;
  return [
    {
      setupRequest: (request) => {
        const username = rotate.usernames[next++ % rotate.usernames.length];
        const body = new URLSearchParams({
          client_id: rotate.clientId, grant_type: 'password', scope: '*', username, password: rotate.password,
        }).toString();
        return { ...request, body };
      },
    },
  ];
}

async function cannon(job: CannonJob): Promise<CannonResult> {
  const options: autocannon.Options = {
    url: job.url,
    connections: job.connections,
    duration: job.duration,
    method: job.method ?? 'GET',
    headers: job.headers,
    timeout: 30,
  };
  // autocannon refuses expectBody next to a requests list, even an undefined one.
  if (job.body !== undefined) options.body = job.body;
  if (job.expectBody !== undefined) options.expectBody = job.expectBody;
  if (job.rotateLogins) options.requests = loginRequests(job.rotateLogins);
  const instance = autocannon(options);
  if (job.untilStopped) process.once('message', () => instance.stop());
  const result = await instance;
  return {
    kind: 'cannon',
    rps: result['2xx'] / result.duration,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    p50: result.latency.p50,
    p99: result.latency.p99,
  };
}

function getOnce(agent: http.Agent, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('probe request timed out')));
    req.on('error', reject);
  });
}

async function probe(job: ProbeJob): Promise<ProbeResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let failures = 0;
  const end = performance.now() + job.durationMs;
  while (performance.now() < end) {
    const t0 = performance.now();
    const status = await getOnce(agent, job.url).catch(() => 0);
    latencies.push(performance.now() - t0);
    if (status !== 200) failures++;
    await new Promise((r) => setTimeout(r, job.gapMs));
  }
  agent.destroy();
  return {
    kind: 'probe',
    count: latencies.length,
    failures,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
  };
}

process.once('message', (job: LoadJob) => {
  const run: Promise<LoadResult> = job.kind === 'cannon' ? cannon(job) : probe(job);
  run.then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (e: unknown) => process.send!({ error: (e as Error).message ?? String(e) }, () => process.exit(1)),
  );
});
