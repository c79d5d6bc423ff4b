/**
 * `npm run bench`: runs each scenario against Runnel and Node-RED (and the bare node:http
 * ceiling where it applies), several rounds each, the systems taking turns in a rotating order so
 * that drift hits all of them; prints one table of medians on stdout, progress on stderr.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_SYSTEMS, parseOptions, USAGE, type Options } from './cli-args.js';
import { ensurePeer, ensurePeer5, PEER5_VERSION, PEER_VERSION } from './peer.js';
import { renderJson, renderMarkdown, renderTable, summarise, type RunMeta, type Samples, type ScenarioSummary } from './report.js';
import { allScenarios } from './scenarios/index.js';
import { HTTP_BODY } from './scenarios/http-chain.js';
import { RoundCutOff, type Scenario, type ScenarioContext } from './scenarios/types.js';
import { makeUsers } from './settings-files.js';
import { scaleCurves, writeCurves } from './plot.js';
import { startSystem, SYSTEM_LABELS, type SystemEnv, type SystemKind } from './systems.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..', '..');
/** Enough distinct users that none is reused while its previous login is in flight. */
const STORM_USERS = 200;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The cluster section runs in its own process (it starts PostgreSQL and three instances). */
const CLUSTER = 'cluster';

function selectScenarios(opts: Options): Scenario[] {
  const all = allScenarios(opts);
  if (opts.only.length === 0) return all;
  const unknown = opts.only.filter((n) => n !== CLUSTER && !all.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${[...all.map((s) => s.name), CLUSTER].join(', ')}`);
  return all.filter((s) => opts.only.includes(s.name));
}

function runCluster(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(benchDir, 'cluster.js')], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the cluster section exited with ${code}`))));
  });
}

/**
 * Scenarios name Runnel and Node-RED; each runs on the machine's Node.js and as its Node.js 24
 * twin (Runnel on 24, Node-RED 5.0.7), in the run when --systems includes it.
 */
const TWINS: Record<SystemKind, SystemKind[]> = {
  runnel: ['runnel', 'runnel-24'], 'runnel-24': [], 'node-red': ['node-red', 'node-red-5'], 'node-red-5': [], bare: ['bare'],
};

/** Round r starts with the r-th system, so every system goes first (and last) in turn. */
function rotated<T>(items: T[], r: number): T[] {
  const k = r % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** The line of a start failure that names the error, for the table's footnote. */
function briefly(message: string): string {
  const lines = message.split('\n').map((l) => l.trim()).filter(Boolean);
  const named = lines.find((l) => /^\w*Error\b|\berror\b/i.test(l) && !l.endsWith(':'));
  return named ? `${lines[0]} ${named}` : lines[0];
}

function fmt(values: Record<string, number>): string {
  return Object.entries(values).map(([k, v]) => `${k}=${Number(v.toPrecision(4))}`).join(' ');
}

/** Node-RED 5.0.7 and the Node.js 24 it runs on (bench/.peer5, bench/.node24); undefined, said on stderr, when npm cannot install them. */
async function installNode24(log: (line: string) => void): Promise<SystemEnv['node24']> {
  const dir = path.join(root, 'bench', '.peer5');
  try {
    return { peerDir: dir, node: await ensurePeer5(dir, path.join(root, 'bench', '.node24'), log) };
  } catch (e) {
    log(`Node-RED ${PEER5_VERSION} on Node.js 24 left out: ${(e as Error).message}`);
    return undefined;
  }
}

async function runScenario(
  scenario: Scenario, ctx: ScenarioContext, unavailable: Partial<Record<SystemKind, string>>,
): Promise<ScenarioSummary> {
  const { opts } = ctx;
  const samples: Samples = {};
  const errors: string[] = [];
  const notes: ScenarioSummary['notes'] = {};
  const kinds = scenario.systems.flatMap((k) => TWINS[k]).filter((k) => k === 'bare' || opts.systems.includes(k));
  for (let round = 0; round < opts.rounds; round++) {
    for (const kind of rotated(kinds, round)) {
      if (unavailable[kind]) continue;
      const label = `[${scenario.name}] round ${round + 1}/${opts.rounds} ${SYSTEM_LABELS[kind]}`;
      let system;
      try {
        const bare = kind === 'bare' ? scenario.bareBody?.(ctx) : undefined;
        const bareScript = kind === 'bare' ? scenario.bareScript : undefined;
        const env = { ...ctx.env, ...(bare ? { bareBody: bare.body, bareType: bare.type } : {}), ...(bareScript ? { bareScript } : {}) };
        system = await startSystem(kind, scenario.seedFlows ? { ...env, seedFlows: scenario.seedFlows(ctx) } : env);
      } catch (e) {
        // A system that cannot start once will not start later either; skip it for the run.
        unavailable[kind] = briefly((e as Error).message);
        log(`${label}: cannot start, skipped from now on:\n${(e as Error).message}`);
        continue;
      }
      const record = (values: Record<string, number>) => {
        for (const [key, value] of Object.entries(values)) ((samples[key] ??= {})[kind] ??= []).push(value);
      };
      const t0 = Date.now();
      try {
        const values = await scenario.measure(system, ctx);
        record(values);
        log(`${label}: ${fmt(values)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (e) {
        // A system that died is named as such, not as the request that found it gone.
        const crash = system.exited();
        if (e instanceof RoundCutOff && !crash) {
          record(e.values);
          notes[kind] = e.note;
          errors.push(`${SYSTEM_LABELS[kind]} round ${round + 1}: ${e.cause instanceof Error ? e.cause.message : e.note}`);
          log(`${label}: ${e.note} ${fmt(e.values)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        } else {
          const why = crash ? `${SYSTEM_LABELS[kind]} ${crash}` : (e as Error).message;
          errors.push(`${SYSTEM_LABELS[kind]} round ${round + 1}: ${why}`);
          log(`${label}: failed: ${why}`);
        }
      } finally {
        await system.stop();
      }
    }
  }
  return summarise(scenario, samples, errors, notes, opts.systems);
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  if (opts.help) {
    process.stdout.write(USAGE);
    return;
  }
  const scenarios = selectScenarios(opts);
  const peerDir = path.join(root, 'bench', '.peer');
  const unavailable: Partial<Record<SystemKind, string>> = {};
  if (opts.systems.includes('node-red')) await ensurePeer(peerDir, log);
  const node24 = opts.systems.some((k) => k === 'node-red-5' || k === 'runnel-24') ? await installNode24(log) : undefined;
  if (!node24) for (const kind of ['node-red-5', 'runnel-24'] as const) unavailable[kind] = 'Node-RED 5 or Node.js 24 could not be installed';
  if (!existsSync(path.join(root, 'bin', 'runnel.js'))) unavailable.runnel = unavailable['runnel-24'] = 'bin/runnel.js not found';
  for (const kind of BENCH_SYSTEMS) {
    if (!opts.systems.includes(kind)) unavailable[kind] = 'left out with --systems';
  }
  const env: SystemEnv = {
    root, peerDir, node24, benchDir, users: await makeUsers(opts.bcryptCost, STORM_USERS), bareBody: HTTP_BODY, settings: opts.settings, nodeArgs: opts.nodeFlags,
  };
  const ctx: ScenarioContext = { env, opts, log };
  const started = Date.now();
  const loadAtStart = os.loadavg()[0];
  const summaries: ScenarioSummary[] = [];
  for (const scenario of scenarios) {
    const t0 = Date.now();
    log(`== ${scenario.name}: ${scenario.description}`);
    summaries.push(await runScenario(scenario, ctx, unavailable));
    log(`== ${scenario.name} took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  log(`all scenarios took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const { help: _help, json: _json, markdown: _markdown, ...shownOptions } = opts;
  const meta: RunMeta = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    peer: PEER_VERSION,
    peer5: PEER5_VERSION,
    systems: opts.systems,
    node24: node24 && execFileSync(node24.node, ['--version'], { encoding: 'utf8' }).trim(),
    loadAverage: { start: loadAtStart, end: os.loadavg()[0] },
    options: shownOptions,
    unavailable,
  };
  process.stdout.write(renderTable(summaries, meta));
  if (opts.json) await writeFile(opts.json, renderJson(summaries, meta));
  if (opts.markdown) await writeFile(opts.markdown, renderMarkdown(summaries, meta));
  const curves = scaleCurves(summaries, ['serve', 'rss', 'kibPerNode', 'redeploy']);
  if (Object.keys(curves).length) log(`scale curves: ${await writeCurves(curves, path.join(root, 'bench', 'scale.png'))}`);
  if (opts.only.length === 0 || opts.only.includes(CLUSTER)) {
    log(`== ${CLUSTER}: Runnel only, three instances on one PostgreSQL`);
    await runCluster();
  }
}

main().catch((e: unknown) => {
  log(`bench: ${(e as Error).message ?? String(e)}`);
  process.exitCode = 1;
});
