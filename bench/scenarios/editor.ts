import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { deployBody, timedDeploy } from '../admin-client.js';
import { rssMiB, type RunningSystem } from '../systems.js';
import { debug, fn, IdSource, inject, probe, tab, type FlowNode } from '../flows.js';
import { DEPLOY_TIMEOUT_MS, PROBE_PATH, adminToken, bigConfig, deployServing, sleep } from './common.js';
import type { Scenario, ScenarioContext } from './types.js';

const CHROMIUM = '/usr/bin/chromium';
/**
 * A folder: each editor load then also records the page's CPU profile (Chromium's Profiler, open in
 * DevTools) and a request timeline there, and prints where the time went, to compare both systems.
 */
const TRACE_DIR = process.env.RUNNEL_BENCH_EDITOR_TRACE;
/** How long the debug flood runs, and how many messages it offers per 10 ms tick. */
const FLOOD_MS = 5000;
const FLOOD_BATCH = 50;

async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
}

/**
 * Opens the editor in a fresh browser context (cold cache), logs in through its dialog, and waits
 * for the palette and the first tab's nodes to be drawn. Answers the milliseconds from navigation
 * to then (the login itself is typed by the automation in a few milliseconds), and the bytes the
 * browser received (compressed sizes).
 */
async function openEditor(browser: Browser, system: RunningSystem, ctx: ScenarioContext, nodesExpected: boolean): Promise<{ page: Page; ms: number; kib: number; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const sizes: Promise<number>[] = [];
  page.on('requestfinished', (r) => sizes.push(r.sizes().then((s) => s.responseBodySize + s.responseHeadersSize, () => 0)));
  const trace = TRACE_DIR ? await startTrace(page) : undefined;
  const start = performance.now();
  await page.goto(system.base);
  await page.fill('#node-dialog-login-username', ctx.env.users.admin, { timeout: 120_000 });
  await page.fill('#node-dialog-login-password', ctx.env.users.password);
  await page.click('#node-dialog-login-submit');
  await page.waitForFunction(
    (expectNodes) => {
      const RED = (globalThis as any).RED;
      const doc = (globalThis as any).document;
      if (!RED?.nodes || !doc.querySelector('.red-ui-palette-node[data-palette-type="inject"]')) return false;
      if (!doc.querySelector('#red-ui-workspace-tabs .red-ui-tab')) return false;
      return !expectNodes || doc.querySelectorAll('#red-ui-workspace-chart .red-ui-flow-node-group').length > 0;
    },
    nodesExpected,
    { timeout: 120_000, polling: 20 },
  ).catch(async (err: unknown) => {
    await page.screenshot({ path: `/tmp/bench-editor-${system.kind}.png` }).catch(() => undefined);
    throw err;
  });
  const ms = performance.now() - start;
  const kib = (await Promise.all(sizes)).reduce((a, b) => a + b, 0) / 1024;
  if (trace) await trace.finish(`${system.kind}-${nodesExpected ? 'big' : 'empty'}-${Date.now()}`, ctx);
  return { page, ms, kib, close: () => context.close() };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** Starts the page's CPU profiler and a request timeline; `finish` writes both and prints a summary. */
async function startTrace(page: Page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 1000 });
  await cdp.send('Profiler.start');
  const t0 = performance.now();
  const timeline: string[] = [];
  const began = new Map<unknown, number>();
  page.on('request', (r) => began.set(r, performance.now() - t0));
  page.on('requestfinished', (r) => {
    const url = new URL(r.url());
    timeline.push(`${(began.get(r) ?? 0).toFixed(0).padStart(6)} → ${(performance.now() - t0).toFixed(0).padStart(6)} ms  ${r.method()} ${url.pathname}${url.search} ${r.headers().accept ?? ''}`);
  });
  page.on('websocket', (ws) => ws.on('framereceived', (f) => timeline.push(`${(performance.now() - t0).toFixed(0).padStart(6)} ms  ws ← ${String(f.payload).slice(0, 120)}`)));
  return {
    async finish(name: string, ctx: ScenarioContext): Promise<void> {
      const { profile } = (await cdp.send('Profiler.stop')) as { profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] } };
      await writeFile(path.join(TRACE_DIR!, `${name}.cpuprofile`), JSON.stringify(profile));
      await writeFile(path.join(TRACE_DIR!, `${name}.timeline.txt`), timeline.join('\n') + '\n');
      const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
      const self = new Map<string, number>();
      profile.samples.forEach((id, i) => {
        const f = frames.get(id)!;
        const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
        self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
      });
      const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 15);
      ctx.log(`  ${name}: page CPU profile and timeline in ${TRACE_DIR}; most self time:`);
      for (const [fn, ms] of top) ctx.log(`    ${ms.toFixed(0).padStart(6)} ms  ${fn}`);
    },
  };
}

function editorLoadScenario(name: string, big: boolean): Scenario {
  return {
    name,
    description: `the editor opened in Chromium (cold cache, logged in) until the palette is loaded and ${big ? 'the first tab of the 10,000-node config is drawn' : 'the empty workspace shows'}; bytes the browser received`,
    systems: ['runnel', 'node-red'],
    metrics: [
      { key: 'ms', label: 'GET / to editor ready', unit: 'ms', digits: 0, goals: [{ kind: 'ratio', op: '<=', value: 0.5 }] },
      { key: 'kib', label: 'bytes received', unit: 'KiB', digits: 0 },
    ],
    async measure(system, ctx) {
      if (big) await deployServing(system, await adminToken(system, ctx), bigConfig(ctx, 'ready'), 'ready');
      const browser = await launch();
      try {
        const editor = await openEditor(browser, system, ctx, big);
        await editor.close();
        return { ms: editor.ms, kib: editor.kib };
      } finally {
        await browser.close();
      }
    },
  };
}

/** An inject (on deploy) into a function node that offers FLOOD_BATCH messages every 10 ms to an active debug node. */
function floodFlow(round: number): FlowNode[] {
  const ids = new IdSource(0xf1);
  const t = ids.id();
  const [i, f, d] = [ids.id(), ids.id(), ids.id()];
  const body = `/* flood ${round} */ const t = setInterval(() => { for (let k = 0; k < ${FLOOD_BATCH}; k++) node.send({payload: {k, text: 'flood message'}}); }, 10); setTimeout(() => clearInterval(t), ${FLOOD_MS}); return null;`;
  const sink = { ...debug(d, t, [2, 0]), active: true, tosidebar: true };
  return [tab(t, 'flood'), inject(i, t, [f], [0, 0], true), fn(f, t, body, [[d]], [1, 0]), sink, ...probe(ids, t, `/${PROBE_PATH}`, 'flood', 1).nodes];
}

/** Runs one flood while sampling the runtime's RSS: its peak growth, and the seconds it took. */
async function flood(system: RunningSystem, token: string, round: number): Promise<{ rssGrowth: number; seconds: number }> {
  const before = await rssMiB(system.pid);
  let peak = before;
  const sampler = setInterval(() => void rssMiB(system.pid).then((v) => (peak = Math.max(peak, v)), () => undefined), 200);
  const started = performance.now();
  try {
    await timedDeploy(system.base, token, deployBody(floodFlow(round)), 'full', system.base + PROBE_PATH, 'flood', DEPLOY_TIMEOUT_MS);
    await sleep(FLOOD_MS + 1000);
  } finally {
    clearInterval(sampler);
  }
  return { rssGrowth: peak - before, seconds: (performance.now() - started) / 1000 };
}

const debugRateScenario: Scenario = {
  name: 'editor-debug-flood',
  description: `one open editor while a function node offers ${FLOOD_BATCH * 100} debug messages/s for ${FLOOD_MS / 1000} s: messages/s the editor received, the runtime's RSS growth during the first flood (a fresh process warming up) and during a second one, the page's longest stall`,
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'rate', label: 'debug messages/s delivered', unit: 'msg/s', digits: 0 },
    { key: 'rssGrowth', label: 'runtime RSS growth during the first flood', unit: 'MiB', digits: 1 },
    { key: 'rssGrowthAgain', label: 'runtime RSS growth during a second flood', unit: 'MiB', digits: 1 },
    { key: 'stall', label: "page's longest timer stall", unit: 'ms', digits: 0 },
  ],
  async measure(system: RunningSystem, ctx: ScenarioContext) {
    const token = await adminToken(system, ctx);
    const browser = await launch();
    try {
      const editor = await openEditor(browser, system, ctx, false);
      await editor.page.evaluate(() => {
        const g = globalThis as any;
        g.__debugCount = 0;
        g.__stall = 0;
        g.RED.comms.subscribe('debug', () => g.__debugCount++);
        let last = performance.now();
        setInterval(() => {
          const now = performance.now();
          g.__stall = Math.max(g.__stall, now - last - 50);
          last = now;
        }, 50);
      });
      const first = await flood(system, token, 1);
      const { count, stall } = await editor.page.evaluate(() => ({ count: (globalThis as any).__debugCount as number, stall: (globalThis as any).__stall as number }));
      // A fresh process grows its heap under the first burst of allocation; a leak would go on growing.
      const again = await flood(system, token, 2);
      await editor.close();
      return { rate: count / first.seconds, rssGrowth: first.rssGrowth, rssGrowthAgain: again.rssGrowth, stall };
    } finally {
      await browser.close();
    }
  },
};

export const editorScenarios: Scenario[] = [editorLoadScenario('editor-load-empty', false), editorLoadScenario('editor-load-10k', true), debugRateScenario];
