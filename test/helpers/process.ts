import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (tests run from dist/test/...). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const BIN = path.join(ROOT, 'bin', 'runnel.js');
/** The `node-red` command: Node-RED's command line over Runnel. */
export const NODE_RED_BIN = path.join(ROOT, 'bin', 'node-red.js');

export interface RunnelProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

const live = new Set<ChildProcess>();

/** SIGKILLs every Runnel this test file spawned that is still running (call it in `finally`). */
export function killRunnels(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** Starts `node bin/runnel.js start --settings FILE` and waits for its "listening on" line. */
export async function spawnRunnel(dir: string, settings: Record<string, unknown>, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<RunnelProcess> {
  const file = path.join(dir, 'settings.json');
  await writeFile(file, JSON.stringify({ uiPort: 0, uiHost: '127.0.0.1', userDir: path.join(dir, 'user'), logging: { level: 'warn' }, ...settings }));
  return spawnRunnelWith(['start', '--settings', file, ...extraArgs], dir, env);
}

/** Starts `node bin/runnel.js <args>` (or another `bin`) in `cwd` (with the `node` executable given) and waits for its "listening on" line. */
export async function spawnRunnelWith(args: string[], cwd: string, env: Record<string, string> = {}, node = process.execPath, bin = BIN): Promise<RunnelProcess> {
  const child = spawn(node, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  live.add(child);
  child.on('exit', () => live.delete(child));
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: a loaded machine starts a process slowly. One that never listens is killed, so it cannot hold the test file open.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runnel did not start within 60 s:\n${out}`));
    }, 60_000);
    const check = () => {
      // The start summary's first line as text, or its JSON log line (the URL ends at the quote).
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`runnel exited before listening:\n${out}`));
    });
  });
  return { child, url, output: () => out, exited };
}

/**
 * Runs the CLI (`bin/runnel.js`, or `bin`) to completion with the given arguments and stdin. The
 * bound is generous, as spawnRunnel's: at load 20 a start-up that loads the runtime took over 15 s.
 */
export function runCli(args: string[], options: { cwd?: string; input?: string; timeoutMs?: number; bin?: string; env?: Record<string, string> } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.bin ?? BIN, ...args], { cwd: options.cwd ?? ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runnel ${args.join(' ')} did not finish in time:\n${stdout}${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Runs the command line's `main` with `args` in this process, capturing what it writes: the exit
 * code, stdout and stderr `runCli` would see, without a Node.js start-up that loads the whole
 * runtime (a second, and on a loaded machine many, per run). Only for commands that end by
 * themselves: `export`, and a start that its arguments stop before anything listens (a start that
 * went on would serve here). Signals, stdin and the process exit need `runCli`.
 */
export async function runMain(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../../src/cli.js');
  const out = { stdout: '', stderr: '' };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (name: 'stdout' | 'stderr') => ((chunk: string | Uint8Array) => {
    out[name] += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = capture('stdout');
  process.stderr.write = capture('stderr');
  try {
    return { code: await main(args), ...out };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
  }
}
