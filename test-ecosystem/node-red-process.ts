/**
 * A `node-red` command line run as scripts and images run it: Node-RED 4.1.15's `red.js` (the
 * bench's peer, installed once by ensurePeer) or Runnel's `bin/node-red.js`. Both take `-p 0` and
 * name the port they took in their start line, so no port is probed before the child listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { ROOT } from '../test/helpers/process.js';
import { eventually } from '../test/helpers/server.js';

export const PEER_DIR = path.join(ROOT, 'bench', '.peer');
export const RED_JS = path.join(PEER_DIR, 'node_modules', 'node-red', 'red.js');

const START_TIMEOUT_MS = 60_000;
/** Node-RED's "Server now running at <url>", Runnel's "listening on <url>" (as text or in a JSON log line). */
const LISTENING = /(?:Server now running at|listening on) (http:\/\/[^\s"/]+)/;

export interface NodeRedProcess {
  base: string;
  pid: number;
  output(): string;
  /** SIGTERM, and the exit. */
  stop(): Promise<void>;
  /** Its exit code, or the signal that ended it. */
  exit: Promise<number | string>;
}

const children = new Set<ChildProcess>();

/**
 * Runs `node <bin> <args>` in `cwd` on port 0 and 127.0.0.1; resolves once it has said where it
 * listens (both say so once the flows have started, or been held back in safe mode) and `route`
 * answers other than 404.
 */
export async function startNodeRed(bin: string, args: string[], cwd: string, route: string, env: Record<string, string> = {}): Promise<NodeRedProcess> {
  const child = spawn(process.execPath, [bin, ...args, '-p', '0', '-D', 'uiHost=127.0.0.1'], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const exit = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  children.add(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const stop = () => stopChild(child);
  // Rejects only while starting: an exit after start (stop() included) must not be an unhandled rejection.
  let starting = true;
  const exited = once(child, 'exit').then(() => {
    if (starting) throw new Error(`exited (${child.exitCode ?? child.signalCode}) during start`);
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  try {
    const origin = await Promise.race([eventually(() => !alive() || LISTENING.exec(out)?.[1], START_TIMEOUT_MS), exited]);
    const base = `${origin}/`;
    const ready = () => !alive() || fetch(base + route, { signal: AbortSignal.timeout(2000) }).then((r) => r.status !== 404, () => false);
    await Promise.race([eventually(ready, START_TIMEOUT_MS), exited]);
    if (!alive()) await exited;
    return { base, pid: child.pid!, output: () => out, stop, exit };
  } catch (e) {
    starting = false;
    await stop();
    throw new Error(`${bin} ${args.join(' ')}: ${(e as Error).message}\n${out}`);
  } finally {
    starting = false;
  }
}

/** Stops every command this file started that is still running. */
export function stopNodeReds(): Promise<void[]> {
  return Promise.all([...children].map(stopChild));
}

function stopChild(child: ChildProcess): Promise<void> {
  children.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = once(child, 'exit').then(() => undefined);
  child.kill('SIGTERM');
  return exited;
}
