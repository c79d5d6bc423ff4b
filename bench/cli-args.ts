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
  help: boolean;
}

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
  --systems LIST         runnel,node-red (default both; the bare server joins http-chain)
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
      help: { type: 'boolean', short: 'h' },
    },
  });
  const systems = values.systems === undefined ? ['runnel', 'node-red'] : list(values.systems);
  for (const s of systems) {
    if (s !== 'runnel' && s !== 'node-red') throw new Error(`--systems takes runnel and/or node-red, got ${s}`);
  }
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
    rounds: positiveInt('rounds', values.rounds, 3),
    duration: positiveInt('duration', values.duration, 10),
    connections: positiveInt('connections', values.connections, 50),
    loginDuration: positiveInt('login-duration', values['login-duration'], 5),
    messages: positiveInt('messages', values.messages, 100_000),
    deploySizes: values['deploy-sizes'] === undefined
      ? [100, 1000, 10_000]
      : list(values['deploy-sizes']).map((s) => positiveInt('deploy-sizes', s, 0)),
    bigNodes: positiveInt('big-nodes', values['big-nodes'], 10_000),
    bcryptCost,
    systems: systems as SystemKind[],
    only: (values.only ?? []).flatMap(list),
    json: values.json,
    markdown: values.markdown,
    settings,
    nodeFlags,
    help: values.help ?? false,
  };
}
