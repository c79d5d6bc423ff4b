/**
 * Soak: runs Runnel as its own process under mixed load for SOAK_MINUTES (default 10) — http-in
 * traffic, deploys of every type (full, nodes, flows, reload), logins with revocation, and module
 * list calls — and prints, per minute, the request count, errors, p99 latency per kind and the
 * server's RSS. Fails (exit 1) on any error or when RSS after warm-up grows by more than 10%.
 * Not part of CI: `npm run soak`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { hashSync } from '../src/auth/bcrypt.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const MINUTE_MS = Number(process.env.SOAK_MINUTE_MS ?? 60_000);
const HTTP_WORKERS = 4;
/** A request that takes longer is counted as an error instead of stalling its worker. */
const REQUEST_TIMEOUT_MS = 10_000;
const PASSWORD = 'soak-password';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KINDS = ['http', 'deploy', 'login', 'nodes'] as const;
type Kind = (typeof KINDS)[number];
const DEPLOY_TYPES = ['full', 'nodes', 'flows', 'reload'] as const;

interface Minute {
  latencies: Record<Kind, number[]>;
  errors: Map<string, number>;
  /**
   * http-in requests caught by a full deploy or reload restarting their flow: a 404 (the route is
   * briefly gone, as in Node-RED) or a 503 flow_restarted (the flow carrying the request was
   * replaced; Node-RED leaves those hanging). Answered, so not failures.
   */
  restarted: number;
  rss: number[];
}

const newMinute = (): Minute => ({
  latencies: { http: [], deploy: [], login: [], nodes: [] },
  errors: new Map(),
  restarted: 0,
  rss: [],
});

/** Tab `web` (http-in → change → http response) never changes; tab `churn` changes every deploy. */
function flows(generation: number) {
  const at = (x: number) => ({ x: 100 + x * 150, y: 100 });
  return [
    { id: 'web', type: 'tab', label: 'web' },
    { id: 'in', type: 'http in', z: 'web', url: '/soak', method: 'get', ...at(0), wires: [['chg']] },
    { id: 'chg', type: 'change', z: 'web', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: 'ok', tot: 'str' }], ...at(1), wires: [['out']] },
    { id: 'out', type: 'http response', z: 'web', statusCode: '', headers: {}, ...at(2), wires: [] },
    { id: 'churn', type: 'tab', label: `churn ${generation}` },
    { id: 'inj', type: 'inject', z: 'churn', repeat: '0.05', payload: String(generation), payloadType: 'str', ...at(0), wires: [['dbg']] },
    { id: 'dbg', type: 'debug', z: 'churn', active: false, ...at(1), wires: [] },
    { id: `c${generation % 50}`, type: 'comment', z: 'churn', name: `generation ${generation}`, ...at(2), wires: [] },
  ];
}

async function startServer(dir: string) {
  const settings = path.join(dir, 'settings.json');
  await writeFile(
    settings,
    JSON.stringify({
      uiPort: 0,
      uiHost: '127.0.0.1',
      userDir: path.join(dir, 'user'),
      credentialSecret: 'soak-secret',
      logging: { level: 'warn' },
      adminAuth: { type: 'credentials', users: [{ username: 'admin', password: hashSync(PASSWORD, 6), permissions: '*' }] },
      loginThrottle: { maxFailures: 1000 },
    }),
  );
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'runnel.js'), 'start', '--settings', settings], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (d) => (out = (out + d).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`runnel did not start:\n${out}`)), 30_000);
    child.stdout.on('data', (d) => {
      out = (out + d).slice(-4000);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', () => reject(new Error(`runnel exited:\n${out}`)));
  });
  return { child, url, output: () => out };
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

function p99(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'runnel-soak-'));
  const server = await startServer(dir);
  const base = server.url;
  const minutes: Minute[] = [newMinute()];
  const current = () => minutes[minutes.length - 1];
  const end = performance.now() + MINUTES * MINUTE_MS;
  const running = () => performance.now() < end;

  let restarting = 0;
  const timed = async (kind: Kind, call: (signal: AbortSignal) => Promise<Response>, ok: (status: number) => boolean) => {
    const t0 = performance.now();
    const duringRestart = restarting > 0;
    try {
      const res = await call(AbortSignal.timeout(REQUEST_TIMEOUT_MS));
      const body = await res.text();
      const restartAnswer = res.status === 404 || (res.status === 503 && body.includes('"flow_restarted"'));
      if (kind === 'http' && restartAnswer && (duringRestart || restarting > 0)) current().restarted++;
      else if (!ok(res.status)) current().errors.set(`${kind} ${res.status}`, (current().errors.get(`${kind} ${res.status}`) ?? 0) + 1);
      current().latencies[kind].push(performance.now() - t0);
      return res;
    } catch (e) {
      const key = `${kind} ${(e as Error).message}`;
      current().errors.set(key, (current().errors.get(key) ?? 0) + 1);
      return undefined;
    }
  };

  const token = async () => {
    const res = await fetch(`${base}auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: PASSWORD }),
    });
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const admin = await token();
  const auth = { authorization: `Bearer ${admin}` };
  const v2 = { ...auth, 'runtime-api-version': 'v2', 'content-type': 'application/json' };
  await fetch(`${base}flows`, { method: 'POST', headers: v2, body: JSON.stringify({ flows: flows(0) }) }).then((r) => r.arrayBuffer());

  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const httpWorker = async () => {
    while (running()) await timed('http', (signal) => fetch(`${base}soak`, { signal }), (s) => s === 200);
  };
  const deployWorker = async () => {
    for (let generation = 1; running(); generation++) {
      const type = DEPLOY_TYPES[generation % DEPLOY_TYPES.length];
      const body = type === 'reload' ? '{}' : JSON.stringify({ flows: flows(generation) });
      const restarts = type === 'full' || type === 'reload';
      if (restarts) restarting++;
      await timed('deploy', (signal) => fetch(`${base}flows`, { method: 'POST', headers: { ...v2, 'runtime-deployment-type': type }, body, signal }), (s) => s === 200);
      if (restarts) restarting--;
      await pause(100);
    }
  };
  const loginWorker = async () => {
    while (running()) {
      const res = await timed(
        'login',
        (signal) =>
          fetch(`${base}auth/token`, {
            method: 'POST',
            signal,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: PASSWORD }),
          }).then(async (r) => {
            const t = ((await r.clone().json()) as { access_token?: string }).access_token;
            if (t) await fetch(`${base}auth/revoke`, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ token: t }) }).then((x) => x.arrayBuffer());
            return r;
          }),
        (s) => s === 200,
      );
      if (!res) await pause(100);
      await pause(200);
    }
  };
  const nodesWorker = async () => {
    while (running()) {
      await timed('nodes', (signal) => fetch(`${base}nodes`, { headers: { ...auth, accept: 'application/json' }, signal }), (s) => s === 200);
      await pause(50);
    }
  };
  const sampler = async () => {
    let minuteEnd = performance.now() + MINUTE_MS;
    while (running()) {
      await pause(Math.min(2000, MINUTE_MS / 10));
      current().rss.push(await rssOf(server.child.pid!));
      if (performance.now() >= minuteEnd && running()) {
        report(minutes.length, current());
        minutes.push(newMinute());
        minuteEnd += MINUTE_MS;
      }
    }
    report(minutes.length, current());
  };

  console.log(`soak: ${MINUTES} × ${MINUTE_MS / 1000} s against ${base} (pid ${server.child.pid})`);
  console.log('minute  requests  errors  p99 ms http/deploy/login/nodes      RSS MB');
  await Promise.all([...Array.from({ length: HTTP_WORKERS }, httpWorker), deployWorker(), loginWorker(), nodesWorker(), sampler()]);

  server.child.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => server.child.on('exit', (c) => r(c)));
  await rm(dir, { recursive: true, force: true });
  process.exitCode = verdict(minutes, code) ? 0 : 1;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function report(index: number, m: Minute): void {
  const total = KINDS.reduce((n, k) => n + m.latencies[k].length, 0);
  const errors = [...m.errors.values()].reduce((a, b) => a + b, 0);
  const p = KINDS.map((k) => p99(m.latencies[k]).toFixed(1)).join('/');
  console.log(`${String(index).padStart(6)}  ${String(total).padStart(8)}  ${String(errors).padStart(6)}  ${p.padEnd(30)}  ${mb(median(m.rss))}`);
  for (const [what, n] of m.errors) console.log(`        error ×${n}: ${what}`);
  if (m.restarted) console.log(`        http 404/503 while a full deploy or reload restarted the route's flow: ${m.restarted}`);
}

/** Minute 1 is warm-up; RSS (per-minute median) must then stay within 10% of minute 2. */
function verdict(minutes: Minute[], exitCode: number | null): boolean {
  const errors = minutes.reduce((n, m) => n + [...m.errors.values()].reduce((a, b) => a + b, 0), 0);
  const requests = minutes.reduce((n, m) => n + KINDS.reduce((s, k) => s + m.latencies[k].length, 0), 0);
  const rss = minutes.map((m) => median(m.rss));
  const baseline = rss[1] ?? rss[0];
  const peakAfter = Math.max(...rss.slice(1));
  const growth = (peakAfter - baseline) / baseline;
  const flat = growth <= 0.1;
  console.log(`requests ${requests}, errors ${errors}, RSS after warm-up ${mb(baseline)} MB → peak ${mb(peakAfter)} MB (${(growth * 100).toFixed(1)}%), clean exit ${exitCode === 0}`);
  console.log(flat && errors === 0 && exitCode === 0 ? 'PASS' : 'FAIL');
  return flat && errors === 0 && exitCode === 0;
}

await main();
