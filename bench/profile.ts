/**
 * `node dist/bench/profile.js --only SCENARIO [--top N] [--out DIR] [--system runnel|bare]`: runs
 * one round of a scenario against Runnel (or the scenario's bare ceiling, to compare) started under
 * `node --cpu-prof`, exactly as the harness starts it, then prints the functions with the most self
 * time. Accepts the harness flags (--duration, --messages, …).
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseOptions } from './cli-args.js';
import { allScenarios } from './scenarios/index.js';
import { HTTP_BODY } from './scenarios/http-chain.js';
import { makeUsers } from './settings-files.js';
import { startSystem, type SystemEnv } from './systems.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(benchDir, '..', '..');

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
}

interface SelfTime {
  name: string;
  ms: number;
  share: number;
}

/** Where a function lives, short enough for a table: the path below the repository or node_modules. */
function where(frame: CallFrame): string {
  if (!frame.url) return '';
  const file = frame.url.replace(/^file:\/\//, '');
  const inModules = file.lastIndexOf('node_modules/');
  const short = inModules >= 0 ? file.slice(inModules + 'node_modules/'.length) : path.relative(root, file);
  return `${short}:${frame.lineNumber + 1}`;
}

/** Self time per function (summed over its call sites), largest first; shares exclude idle time. */
function selfTimes(profile: CpuProfile): { total: number; busy: number; rows: SelfTime[] } {
  const frameOf = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byName = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = frameOf.get(profile.samples[i])!;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    total += ms;
    if (frame.functionName === '(idle)') {
      idle += ms;
      continue;
    }
    const key = `${frame.functionName || '(anonymous)'} ${where(frame)}`.trim();
    byName.set(key, (byName.get(key) ?? 0) + ms);
  }
  const busy = total - idle;
  const rows = [...byName].map(([name, ms]) => ({ name, ms, share: ms / busy })).sort((a, b) => b.ms - a.ms);
  return { total, busy, rows };
}

function takeFlag(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const [, value] = argv.splice(i, 2);
  return value;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const top = Number(takeFlag(argv, '--top') ?? 25);
  const out = path.resolve(takeFlag(argv, '--out') ?? path.join(os.tmpdir(), `runnel-profile-${Date.now()}`));
  const kind = takeFlag(argv, '--system') ?? 'runnel';
  if (kind !== 'runnel' && kind !== 'bare') throw new Error('--system is runnel or bare');
  const opts = parseOptions(argv);
  const scenario = allScenarios(opts).find((s) => s.name === opts.only[0]);
  if (!scenario || opts.only.length !== 1) throw new Error('name exactly one scenario with --only');
  await mkdir(out, { recursive: true });
  if (kind === 'bare' && !scenario.systems.includes('bare')) throw new Error(`${scenario.name} has no bare ceiling`);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  let env: SystemEnv = {
    root, peerDir: path.join(root, 'bench', '.peer'), benchDir,
    users: await makeUsers(opts.bcryptCost, 200), bareBody: HTTP_BODY,
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${out}`],
  };
  if (kind === 'bare') {
    const bare = scenario.bareBody?.({ env, opts, log });
    env = { ...env, ...(bare ? { bareBody: bare.body, bareType: bare.type } : {}), ...(scenario.bareScript ? { bareScript: scenario.bareScript } : {}) };
  }
  const system = await startSystem(kind, env);
  try {
    log(`${scenario.name}: ${JSON.stringify(await scenario.measure(system, { env, opts, log }))}`);
  } finally {
    await system.stop();
  }
  // Worker threads write their own profiles; the main thread's has thread id 0 in its name.
  const file = (await readdir(out)).find((f) => /\.0\.\d+\.cpuprofile$/.test(f));
  if (!file) throw new Error(`no main-thread .cpuprofile in ${out}: did Runnel exit cleanly on SIGTERM?`);
  const { total, busy, rows } = selfTimes(JSON.parse(await readFile(path.join(out, file), 'utf8')) as CpuProfile);
  process.stdout.write(`profile ${path.join(out, file)}: ${total.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms not idle\n`);
  process.stdout.write('| self ms | % of busy | function |\n| ---: | ---: | --- |\n');
  for (const r of rows.slice(0, top)) {
    process.stdout.write(`| ${r.ms.toFixed(1)} | ${(r.share * 100).toFixed(1)} | \`${r.name}\` |\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`profile: ${(e as Error).message ?? String(e)}\n`);
  process.exitCode = 1;
});
