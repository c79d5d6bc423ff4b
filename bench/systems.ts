/**
 * Starting and stopping the systems under test, each as its own `node` process (so its pid is
 * the process whose memory we read) on a loopback port, with a fresh user directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { nodeRedSettings, runnelSettings, type BenchUsers } from './settings-files.js';

/**
 * `node-red` is the peer in `peerDir` (4.1.15 in the bench); `node-red-5` is Node-RED 5.0.7 on
 * Node.js 24, and `runnel-24` Runnel on that same binary, so that the 5.0.7 comparison can be
 * made on equal Node.js.
 */
export type SystemKind = 'runnel' | 'runnel-24' | 'node-red' | 'node-red-5' | 'bare';

export const SYSTEM_LABELS: Record<SystemKind, string> = {
  runnel: 'Runnel', 'runnel-24': 'Runnel on Node 24', 'node-red': 'Node-RED', 'node-red-5': 'Node-RED 5.0.7', bare: 'bare ceiling',
};

export interface RunningSystem {
  kind: SystemKind;
  /** Root URL with a trailing slash; admin API and http-in routes both live under it. */
  base: string;
  /** Its user directory (a temp dir, removed at stop). */
  userDir: string;
  pid: number;
  /** performance.now() when the process was spawned, and when it first answered its ready path. */
  spawnedAt: number;
  readyAt: number;
  /** How the process ended, with the last lines it printed, while it has not been stopped; undefined while it runs. */
  exited(): string | undefined;
  stop(): Promise<void>;
}

export interface SystemEnv {
  /** Repository root (where bin/runnel.js lives). */
  root: string;
  /** Folder holding node_modules/node-red. */
  peerDir: string;
  /** The node binary that runs Node-RED, when not this process's (Node-RED 5 needs Node ≥ 22.9). */
  peerNode?: string;
  /** Node-RED 5's folder and the Node.js 24 binary, for the `node-red-5` and `runnel-24` systems. */
  node24?: { peerDir: string; node: string };
  /** The compiled bench folder (where bare-server.js lives). */
  benchDir: string;
  users: BenchUsers;
  /** What the bare server answers, and its content type (default: the http response node's for a string). */
  bareBody: string;
  bareType?: string;
  /** The bare ceiling's script in benchDir, when it is not the node:http server (it takes the port as its argument). */
  bareScript?: string;
  /** A flows.json the system finds in its user dir at start (the start-up scenario). */
  seedFlows?: string;
  /** Files the system finds in its user dir at start, by path relative to it (a node module to load). */
  userFiles?: Record<string, string>;
  /** Settings both systems get on top of the bench's own (a key set to undefined is left out). */
  settings?: Record<string, unknown>;
  /** Extra `node` flags for the systems' processes (the profiler passes `--cpu-prof`). */
  nodeArgs?: string[];
}

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const OUTPUT_TAIL = 4000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Keeps the last few kilobytes a child printed, to explain a failed start. */
function captureTail(child: ChildProcess): () => string {
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => tail.trim();
}

async function waitUntilAnswering(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited (${child.exitCode ?? child.signalCode}) during start:\n${output()}`);
    }
    const ok = await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
    if (ok) return;
    // Short: the start-up scenario reads the time of the first answer.
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`did not answer ${url} within ${START_TIMEOUT_MS / 1000} s:\n${output()}`);
}

function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

interface Launch {
  args: string[];
  cwd: string;
  readyPath: string;
}

export async function startSystem(kind: SystemKind, env: SystemEnv): Promise<RunningSystem> {
  const node24 = kind === 'runnel-24' || kind === 'node-red-5' ? env.node24 : undefined;
  if (node24 === undefined && (kind === 'runnel-24' || kind === 'node-red-5')) {
    throw new Error(`${SYSTEM_LABELS[kind]}: Node-RED 5 and Node.js 24 are not installed`);
  }
  const port = await freePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), `runnel-bench-${kind}-`));
  const userDir = path.join(dir, 'user');
  let plan: Launch;
  let exec = node24?.node ?? process.execPath;
  if (kind === 'runnel' || kind === 'runnel-24') {
    const file = path.join(dir, 'settings.json');
    await writeFile(file, runnelSettings(port, userDir, env.users, env.settings));
    plan = { args: [path.join(env.root, 'bin', 'runnel.js'), 'start', '--settings', file], cwd: env.root, readyPath: 'auth/login' };
  } else if (kind === 'node-red' || kind === 'node-red-5') {
    const file = path.join(dir, 'settings.js');
    await writeFile(file, nodeRedSettings(port, env.users, env.settings));
    const red = path.join(node24?.peerDir ?? env.peerDir, 'node_modules', 'node-red', 'red.js');
    plan = { args: [red, '-u', userDir, '-s', file, '-p', String(port)], cwd: dir, readyPath: 'auth/login' };
    exec = node24?.node ?? env.peerNode ?? exec;
  } else if (env.bareScript) {
    plan = { args: [path.join(env.benchDir, env.bareScript), String(port)], cwd: dir, readyPath: '' };
  } else {
    const bodyFile = path.join(dir, 'body');
    await writeFile(bodyFile, env.bareBody);
    const args = [path.join(env.benchDir, 'bare-server.js'), String(port), bodyFile];
    plan = { args: env.bareType ? [...args, env.bareType] : args, cwd: dir, readyPath: '' };
  }
  const seeds = kind === 'bare' ? {} : { ...env.userFiles, ...(env.seedFlows === undefined ? {} : { 'flows.json': env.seedFlows }) };
  for (const [file, text] of Object.entries(seeds)) {
    await mkdir(path.dirname(path.join(userDir, file)), { recursive: true });
    await writeFile(path.join(userDir, file), text);
  }
  const spawnedAt = performance.now();
  const child = spawn(exec, [...(env.nodeArgs ?? []), ...plan.args], { cwd: plan.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureTail(child);
  const base = `http://127.0.0.1:${port}/`;
  const cleanUp = async () => {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilAnswering(base + plan.readyPath, child, output);
  } catch (e) {
    await cleanUp();
    throw new Error(`${SYSTEM_LABELS[kind]} ${(e as Error).message}`);
  }
  const exited = () => {
    if (child.exitCode === null && child.signalCode === null) return undefined;
    return `exited (${child.exitCode ?? child.signalCode}): ${output().split('\n').slice(-3).join(' / ')}`;
  };
  return { kind, base, userDir, pid: child.pid!, spawnedAt, readyAt: performance.now(), exited, stop: cleanUp };
}

/** Resident set size of a process, in MiB (Linux /proc). */
export function rssMiB(pid: number): Promise<number> {
  return statusMiB(pid, 'VmRSS');
}

/** Peak resident set size of a process so far, in MiB (Linux /proc VmHWM). */
export function peakRssMiB(pid: number): Promise<number> {
  return statusMiB(pid, 'VmHWM');
}

/**
 * The process's private resident memory (RssAnon), in MiB: RSS less the file-backed pages, which
 * are mostly the `node` executable's own code (about 34 MiB in a bare `node`), shared by every
 * Node.js process on the machine and the same for both systems.
 */
export function anonRssMiB(pid: number): Promise<number> {
  return statusMiB(pid, 'RssAnon');
}

async function statusMiB(pid: number, field: string): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  if (!kb) throw new Error(`no ${field} for pid ${pid}`);
  return Number(kb[1]) / 1024;
}

/** CPU seconds (user + system, every thread) a process has used so far, from /proc. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
