import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before } from 'node:test';
import { startCluster, type ClusterInstance, type TestCluster } from './cluster.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { startPostgres, type TestPostgres } from './postgres.js';
import { killRunnels } from './process.js';
import { ADMIN_PASSWORD, eventually, request } from './server.js';

/**
 * Who was primary when, seen from outside the cluster: a primary-only tab reports `{instance}` ten
 * times a second to an HTTP server in the test process, which no fault between the instances and
 * PostgreSQL reaches. From the reports, two primaries at once and the time without one can be told.
 */

export interface Report {
  instance: string;
  time: number;
}

export interface Reporter {
  url: string;
  /** Every report so far, oldest first. */
  reports: Report[];
  /** The instance of the latest report. */
  latest(): string;
  close(): void;
}

/** Reports of one instance further apart than this belong to two terms. */
const TERM_GAP_MS = 1000;

export async function startReporter(): Promise<Reporter> {
  const reports: Report[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      try {
        reports.push({ instance: (JSON.parse(body) as { instance: string }).instance, time: Date.now() });
      } catch {
        // Not a report: ignored.
      }
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/report`,
    reports,
    latest: () => reports[reports.length - 1]!.instance,
    close: () => void server.close(),
  };
}

/**
 * A primary-only tab reporting to `reportUrl` (each instance's `functionGlobalContext.instance`
 * names it), and a tab serving `text` at GET /text, to tell which deploy an instance runs.
 */
export function reportingFlows(reportUrl: string, text: string): Array<Record<string, unknown>> {
  return [
    { id: 'sched', type: 'tab', label: 'Scheduler', env: [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true', type: 'str' }] },
    { id: 'tick', type: 'inject', z: 'sched', repeat: '0.1', once: true, onceDelay: 0, props: [{ p: 'payload', v: '1', vt: 'num' }], x: 1, y: 1, wires: [['who']] },
    { id: 'who', type: 'function', z: 'sched', outputs: 1, x: 1, y: 1, wires: [['report']], func: "msg.payload = {instance: global.get('instance')}; return msg;" },
    { id: 'report', type: 'http request', z: 'sched', method: 'POST', ret: 'txt', url: reportUrl, x: 1, y: 1, wires: [] },
    { id: 'web', type: 'tab', label: 'Web' },
    { id: 'in', type: 'http in', z: 'web', url: '/text', method: 'get', x: 1, y: 1, wires: [['fn']] },
    { id: 'fn', type: 'function', z: 'web', outputs: 1, x: 1, y: 1, wires: [['out']], func: `msg.payload = ${JSON.stringify(text)}; return msg;` },
    { id: 'out', type: 'http response', z: 'web', x: 1, y: 1, wires: [] },
  ];
}

/** Each instance's terms as primary: runs of reports no further apart than TERM_GAP_MS. */
function terms(reports: Report[]): Array<{ instance: string; from: number; to: number }> {
  const open = new Map<string, { instance: string; from: number; to: number }>();
  const all: Array<{ instance: string; from: number; to: number }> = [];
  for (const r of [...reports].sort((a, b) => a.time - b.time)) {
    const term = open.get(r.instance);
    if (term && r.time - term.to <= TERM_GAP_MS) term.to = r.time;
    else {
      const next = { instance: r.instance, from: r.time, to: r.time };
      open.set(r.instance, next);
      all.push(next);
    }
  }
  return all;
}

export function assertNeverTwoPrimaries(reports: Report[]): void {
  const all = terms(reports);
  for (const a of all) {
    for (const b of all) {
      if (a.instance === b.instance) continue;
      assert.ok(a.to < b.from || b.to < a.from, `two primaries at once: ${JSON.stringify(a)} and ${JSON.stringify(b)}`);
    }
  }
}

/** The longest time without any report between `from` and `to`: how long the cluster had no primary at most. */
export function longestSilence(reports: Report[], from: number, to: number): number {
  const times = [from, ...reports.map((r) => r.time).filter((t) => t > from && t < to).sort((a, b) => a - b), to];
  let longest = 0;
  for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
  return longest;
}

export interface FaultedCluster {
  readonly pg: TestPostgres;
  readonly cluster: TestCluster;
  readonly nodes: ClusterInstance[];
  /** Each instance's fault proxy, by id. */
  readonly proxies: Map<string, FaultProxy>;
  readonly reporter: Reporter;
  /** An admin token, issued by node0. */
  readonly token: string;
  /** The rev of the set-up's deploy of `reportingFlows(reporter.url, 'one')`. */
  readonly rev: string;
  /** Passes every link and stops everything, killing any instance a stop leaves behind. */
  stop(): Promise<void>;
}

/**
 * A reporter, a throwaway PostgreSQL and three instances each behind its own fault proxy on schema
 * `schema` (`functionGlobalContext.instance` names each), with the reporting flows deployed and
 * reporting. `extra` and `envFor` as for `startCluster`. What a failed start had started is stopped.
 */
export async function startFaultedCluster(schema: string, extra: Record<string, unknown> = {}, envFor: Record<string, Record<string, string>> = {}): Promise<FaultedCluster> {
  const proxies = new Map<string, FaultProxy>();
  let pg: TestPostgres | undefined;
  let cluster: TestCluster | undefined;
  let reporter: Reporter | undefined;
  const stop = async () => {
    for (const p of proxies.values()) p.pass();
    await cluster?.stop().catch(() => undefined);
    killRunnels();
    for (const p of proxies.values()) await p.close();
    await pg?.dispose();
    reporter?.close();
  };
  try {
    reporter = await startReporter();
    pg = await startPostgres();
    const perInstance: Record<string, Record<string, unknown>> = {};
    for (const id of ['node0', 'node1', 'node2']) {
      const proxy = await startFaultProxy(pg.port);
      proxies.set(id, proxy);
      perInstance[id] = { storage: { type: 'postgres', url: proxy.urlFor(pg.url), schema }, functionGlobalContext: { instance: id } };
    }
    cluster = await startCluster(pg.url, schema, 3, extra, perInstance, envFor);
    const node0 = cluster.instances[0]!;
    const login = { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD };
    const token = (await request(node0.at('auth/token'), { method: 'POST', json: login })).body.access_token as string;
    const deployed = await request(node0.at('flows'), { method: 'POST', token, headers: { 'Runtime-API-Version': 'v2' }, json: { flows: reportingFlows(reporter.url, 'one') } });
    assert.equal(deployed.status, 200, deployed.text);
    const r = reporter;
    await eventually(() => r.reports.length > 5, 10_000, 100);
    return { pg, cluster, nodes: cluster.instances, proxies, reporter, token, rev: deployed.body.rev as string, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * `startFaultedCluster` before a test file's tests, stopped after them. Call it inside `describe`,
 * before the file's own hooks; read its fields in tests and hooks.
 */
export function faultedClusterSuite(schema: string, extra: Record<string, unknown> = {}, envFor: Record<string, Record<string, string>> = {}): Omit<FaultedCluster, 'stop'> {
  let started: FaultedCluster | undefined;
  before(async () => {
    started = await startFaultedCluster(schema, extra, envFor);
  });
  after(async () => {
    await started?.stop();
  });
  const get = () => started!;
  return {
    get pg() {
      return get().pg;
    },
    get cluster() {
      return get().cluster;
    },
    get nodes() {
      return get().nodes;
    },
    get proxies() {
      return get().proxies;
    },
    get reporter() {
      return get().reporter;
    },
    get token() {
      return get().token;
    },
    get rev() {
      return get().rev;
    },
  };
}
