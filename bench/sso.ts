/**
 * Single sign-on, measured (`npm run bench:sso`): Runnel's own time in a login round trip through a
 * real OpenID Connect provider (oidc-provider, in this process), and what checking a token costs
 * per request. A round is the editor's whole login in a fresh browser: GET /auth/strategy, the
 * provider's login and consent pages, the callback (where Runnel redeems the code at the provider's
 * token endpoint and checks the ID token) and the code exchange at POST /auth/token. Runnel's time
 * is the time of its three requests as the client sees them, less what the provider spent answering
 * Runnel's own requests during the callback (timed inside the provider). The token check: GET /flows
 * under load with a local account's session token (the credentials check every deployment had) and
 * with an OIDC session token, beside GET /auth/login, which checks none.
 */
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cannon } from './load.js';
import { percentile } from './stats.js';
import { cpuSeconds } from './systems.js';
import { spawnRunnel } from '../test/helpers/process.js';
import { ADMIN_PASSWORD, adminAuth } from '../test/helpers/users.js';
import { browse, CLIENT_ID, CLIENT_SECRET, CookieJar, signIn, startProvider } from '../test/auth/oidc-provider.js';

const WARMUP = 5;
const ROUNDS = Number(process.env.RUNNEL_BENCH_SSO_ROUNDS ?? 50);
const GOAL_MS = 50;
const LOAD_SECONDS = 5;
const LOAD_CONNECTIONS = 10;

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

interface Round {
  /** Runnel's time, and its parts: the login's start, the callback (less the provider's answers to it), the code exchange. */
  runnel: number;
  start: number;
  callback: number;
  exchange: number;
  total: number;
  provider: number;
}

async function main(): Promise<void> {
  console.log(`load average at start: ${load()}`);
  let window: number[] | undefined;
  let providerTotal = 0;
  const provider = await startProvider({
    groups: { alice: ['admins'] },
    onServed: (_url, ms) => {
      providerTotal += ms;
      window?.push(ms);
    },
  });
  const dir = path.join(os.tmpdir(), `runnel-bench-sso-${process.pid}`);
  await mkdir(dir, { recursive: true });
  const runnel = await spawnRunnel(dir, {
    adminAuth: { type: 'oidc', issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scope: 'openid profile groups', permissions: { admins: '*' }, users: adminAuth().users.slice(0, 1) },
  });
  const at = (p: string) => new URL(p, runnel.url).href;
  provider.register({ callbackURL: at('auth/strategy/callback') });

  const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> => {
    const began = performance.now();
    const value = await fn();
    return { value, ms: performance.now() - began };
  };

  /** One login; the editor's session token, and the round's times. */
  const round = async (): Promise<{ token: string; times: Round }> => {
    const jar = new CookieJar();
    providerTotal = 0;
    const began = performance.now();
    const start = await timed(() => browse(jar, at('auth/strategy')));
    const back = await signIn(jar, start.value.headers.get('location')!, 'alice');
    window = [];
    const callback = await timed(() => browse(jar, back.url));
    const duringCallback = window.reduce((s, ms) => s + ms, 0);
    window = undefined;
    const code = new URL(callback.value.headers.get('location')!, runnel.url).searchParams.get('code');
    if (!code) throw new Error(`the login failed: ${callback.value.headers.get('location')}`);
    const exchange = await timed(() => fetch(at('auth/token'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ code }) }));
    const { access_token: token } = (await exchange.value.json()) as { access_token: string };
    const total = performance.now() - began;
    const inCallback = callback.ms - duringCallback;
    return { token, times: { runnel: start.ms + inCallback + exchange.ms, start: start.ms, callback: inCallback, exchange: exchange.ms, total, provider: providerTotal } };
  };

  try {
    for (let i = 0; i < WARMUP; i++) await round();
    const rounds: Round[] = [];
    let oidcToken = '';
    const cpuBefore = await cpuSeconds(runnel.child.pid!);
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round();
      rounds.push(r.times);
      oidcToken = r.token;
    }
    // CPU time is what a loaded machine does not inflate: the wall times above include waiting for a core.
    const cpuPerLogin = ((await cpuSeconds(runnel.child.pid!)) - cpuBefore) / ROUNDS * 1000;
    const show = (label: string, values: number[]) =>
      console.log(`${label.padEnd(34)} p50 ${percentile(values, 50).toFixed(1).padStart(6)} ms   p95 ${percentile(values, 95).toFixed(1).padStart(6)} ms   max ${Math.max(...values).toFixed(1).padStart(6)} ms`);
    console.log(`\nlogin round trip, ${ROUNDS} rounds after ${WARMUP} warm-up:`);
    show('whole round trip (client side)', rounds.map((r) => r.total));
    show("the provider's own time", rounds.map((r) => r.provider));
    const runnelMs = rounds.map((r) => r.runnel);
    show("Runnel's time", runnelMs);
    show('  GET /auth/strategy', rounds.map((r) => r.start));
    show("  the callback, less the provider's", rounds.map((r) => r.callback));
    show('  POST /auth/token (the exchange)', rounds.map((r) => r.exchange));
    console.log(`Runnel's CPU per login (user + system, /proc)   ${cpuPerLogin.toFixed(1)} ms`);
    console.log(`goal: Runnel's time <= ${GOAL_MS} ms (p95): ${percentile(runnelMs, 95) <= GOAL_MS ? 'met' : 'NOT met'} at load average ${load()} (wall times on a loaded machine are upper bounds)`);

    const password = await fetch(at('auth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD }),
    });
    const { access_token: localToken } = (await password.json()) as { access_token: string };
    console.log(`\ntoken check per request: ${LOAD_CONNECTIONS} connections x ${LOAD_SECONDS} s each`);
    const cases: Array<[string, string, Record<string, string>]> = [
      ['GET /auth/login (no token)', 'auth/login', {}],
      ['GET /flows, local account token', 'flows', { Authorization: `Bearer ${localToken}` }],
      ['GET /flows, OIDC session token', 'flows', { Authorization: `Bearer ${oidcToken}` }],
    ];
    for (const [label, route, headers] of cases) {
      const cpu = await cpuSeconds(runnel.child.pid!);
      const r = await cannon({ url: at(route), connections: LOAD_CONNECTIONS, duration: LOAD_SECONDS, headers });
      const cpuPerRequest = ((await cpuSeconds(runnel.child.pid!)) - cpu) / r.ok * 1e6;
      if (r.non2xx + r.errors + r.timeouts > 0) throw new Error(`${label}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
      console.log(`${label.padEnd(34)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   CPU ${cpuPerRequest.toFixed(0)} µs/request`);
    }
  } finally {
    runnel.child.kill('SIGTERM');
    await runnel.exited;
    await provider.close();
    await rm(dir, { recursive: true, force: true });
    console.log(`\nload average at end: ${load()}`);
  }
}

await main();
