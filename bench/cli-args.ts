import { parseArgs } from 'node:util';
import type { SystemKind } from './systems.js';

export interface Options {
  rounds: number;
  /** Seconds of load per round for http-chain-* and get-flows-10k. */
  duration: number;
  /** Connections for http-chain-*. */
  connections: number;
  /** Seconds of login storm per round. */
  loginDuration: number;
  /** Hops for msg-throughput. */
  messages: number;
  deploySizes: number[];
  /** Size of the "10k" config used by redeploy, get-flows and rss. */
  bigNodes: number;
  bcryptCost: number;
  systems: SystemKind[];
  /** Scenario names to run; empty = all. */
  only: string[];
  json: string | undefined;
  markdown: string | undefined;
  /** Extra settings for every system under test (e.g. metrics on), from --settings JSON. */
  settings: Record<string, unknown> | undefined;
  /** Node.js flags for every system under test (e.g. V8 heap limits for small devices), from --node-flags. */
  nodeFlags: string[];
  /** A run of minutes: one round, short loads, small configs, the scale curve up to 10,000 nodes. */
  quick: boolean;
  help: boolean;
}

/** Every system the bench compares; the bare ceiling joins the scenarios that have one. */
export const BENCH_SYSTEMS: SystemKind[] = ['runnel', 'runnel-24', 'node-red', 'node-red-5'];

export const USAGE = `Usage: npm run bench -- [flags]
  --only NAME[,NAME]     run only these scenarios (see bench/README.md for names)
  --rounds N             rounds per scenario and system, medians reported (default 3)
  --duration S           seconds of load per round for http-chain-* and get-flows-10k (default 10)
  --connections C        autocannon connections for http-chain-* (default 50)
  --login-duration S     seconds of login storm per round (default 5)
  --messages N           hops in msg-throughput (default 100000)
  --deploy-sizes A,B,C   node counts for deploy-N (default 100,1000,10000)
  --big-nodes N          size of the big config for redeploy/get-flows/rss (default 10000)
  --bcrypt-cost N        bcrypt cost of the users' hashes, same for both systems (default 8)
  --systems LIST         of runnel,runnel-24,node-red,node-red-5 (default all: Runnel on this Node and on
                         Node 24, Node-RED 4.1.15 on this Node, Node-RED 5.0.7 on Node 24)
  --quick                minutes instead of an hour: 1 round, 2 s loads, 100/1000-node deploys, a 1000-node
                         big config, scale up to 10000 nodes (explicit flags still win)
  --settings JSON        extra settings for both systems, e.g. '{"metrics":{"enabled":true}}'
  --node-flags='FLAGS'   Node.js flags for both systems, e.g. --node-flags='--max-semi-space-size=1 --lite-mode'
  --json FILE            write every sample and summary as JSON
  --markdown FILE        write the results table as Markdown
`;

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return n;
}

function list(raw: string | undefined): string[] {
  return raw === undefined ? [] : raw.split(',').map((s) => s.trim()).filter(Boolean);
}

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      only: { type: 'string', multiple: true },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      'login-duration': { type: 'string' },
      messages: { type: 'string' },
      'deploy-sizes': { type: 'string' },
      'big-nodes': { type: 'string' },
      'bcrypt-cost': { type: 'string' },
      systems: { type: 'string' },
      json: { type: 'string' },
      markdown: { type: 'string' },
      settings: { type: 'string' },
      'node-flags': { type: 'string' },
      quick: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const systems = values.systems === undefined ? BENCH_SYSTEMS : list(values.systems);
  for (const s of systems) {
    if (!(BENCH_SYSTEMS as string[]).includes(s)) throw new Error(`--systems takes some of ${BENCH_SYSTEMS.join(',')}, got ${s}`);
  }
  const quick = values.quick ?? false;
  const bcryptCost = positiveInt('bcrypt-cost', values['bcrypt-cost'], 8);
  if (bcryptCost < 4 || bcryptCost > 31) throw new Error('--bcrypt-cost must be between 4 and 31');
  let settings: Record<string, unknown> | undefined;
  if (values.settings !== undefined) {
    try {
      settings = JSON.parse(values.settings) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`--settings must be a JSON object: ${(e as Error).message}`);
    }
    if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) throw new Error('--settings must be a JSON object');
  }
  const nodeFlags = (values['node-flags'] ?? '').split(/\s+/).filter(Boolean);
  for (const flag of nodeFlags) {
    if (!flag.startsWith('--')) throw new Error(`--node-flags takes Node.js flags starting with --, got ${flag}`);
  }
  return {
    rounds: positiveInt('rounds', values.rounds, quick ? 1 : 3),
    duration: positiveInt('duration', values.duration, quick ? 2 : 10),
    connections: positiveInt('connections', values.connections, 50),
    loginDuration: positiveInt('login-duration', values['login-duration'], quick ? 2 : 5),
    messages: positiveInt('messages', values.messages, quick ? 20_000 : 100_000),
    deploySizes: values['deploy-sizes'] === undefined
      ? quick ? [100, 1000] : [100, 1000, 10_000]
      : list(values['deploy-sizes']).map((s) => positiveInt('deploy-sizes', s, 0)),
    bigNodes: positiveInt('big-nodes', values['big-nodes'], quick ? 1000 : 10_000),
    bcryptCost,
    systems: systems as SystemKind[],
    only: (values.only ?? []).flatMap(list),
    json: values.json,
    markdown: values.markdown,
    settings,
    nodeFlags,
    quick,
    help: values.help ?? false,
  };
}
