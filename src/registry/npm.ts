import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../base/log.js';

/** The npm CLI bundled with the running Node, so the system PATH and shell never matter. */
export function bundledNpmCli(): string {
  const candidates = [
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    path.join(path.dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js'),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`npm is not bundled with this Node (looked in ${candidates.join(', ')})`);
  return found;
}

export interface NpmResult {
  exitCode: number | null;
  /** npm's error code (`E404`, `ETARGET`…) from its `npm error code X` line. */
  errorCode?: string;
  /** The line of npm's output that explains the failure. */
  summary?: string;
  timedOut: boolean;
}

export interface NpmOptions {
  cwd: string;
  timeoutMs: number;
  log: Logger;
  /** Each output line as it comes (the editor's event log shows npm's progress). */
  onLine?: (line: string, stream: 'out' | 'err') => void;
}

/** Runs npm with arguments as an array (no shell); each output line is logged at info level. */
export function runNpm(args: string[], { cwd, timeoutMs, log, onLine }: NpmOptions): Promise<NpmResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundledNpmCli(), ...args], {
      cwd,
      shell: false,
      // Its own process group, so a timeout also kills install scripts npm started.
      detached: process.platform !== 'win32',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
    });
    const errors: string[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    const onLines = (stream: NodeJS.ReadableStream, name: 'out' | 'err') => {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split(/\r?\n/);
        rest = lines.pop() ?? '';
        for (const line of lines) record(line, name);
      });
      stream.on('end', () => rest && record(rest, name));
    };
    const record = (line: string, name: 'out' | 'err') => {
      if (!line.trim()) return;
      log.info({ npm: args[0] }, line);
      onLine?.(line, name);
      if (/^npm (error|ERR!)/.test(line)) errors.push(line.replace(/^npm (error|ERR!)\s*/, ''));
    };
    onLines(child.stdout, 'out');
    onLines(child.stderr, 'err');
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, timedOut, ...describeFailure(errors) });
    });
  });
}

/** Picks npm's error code and the first line that says what went wrong (not the log-file hint). */
export function describeFailure(errorLines: string[]): { errorCode?: string; summary?: string } {
  const codeLine = errorLines.find((l) => /^code\s+\S+/.test(l));
  const errorCode = codeLine ? codeLine.split(/\s+/)[1] : undefined;
  const summary = errorLines.find((l) => l.trim() && !/^(code|errno|syscall|path|dest)\s/.test(l) && !/complete log of this run|^A complete log/i.test(l));
  return { errorCode, summary: summary?.trim() };
}

/** Makes sure the user dir has the package.json npm records installed modules in. */
export async function ensureUserPackage(userDir: string): Promise<void> {
  const file = path.join(userDir, 'package.json');
  try {
    JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const manifest = { name: 'runnel-project', description: 'Node modules installed into this Runnel', version: '0.0.1', private: true, dependencies: {} };
    await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
  }
}
