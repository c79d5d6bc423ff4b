import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, realpathSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Logger } from '../base/log.js';
import { RunnelError } from '../base/errors.js';

/** How to run npm: `file` with `args` before npm's own arguments (never through a shell). */
export interface NpmCommand {
  file: string;
  args: string[];
}

const cli = (script: string): NpmCommand => ({ file: process.execPath, args: [script] });

/**
 * Finds npm as a user expects it to be found, first match wins: the npm that ships with the
 * running Node (beside process.execPath, so it matches that Node), an `npm` package installed as a
 * dependency (Node-RED 5's way), then `npm` on PATH (Node-RED 4's). Looked up at each use, so npm
 * installed after the start is found.
 */
export function findNpm(env: NodeJS.ProcessEnv = process.env): NpmCommand | undefined {
  const nodeDir = path.dirname(process.execPath);
  const bundled = [path.join(nodeDir, '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'), path.join(nodeDir, 'node_modules', 'npm', 'bin', 'npm-cli.js')];
  const found = bundled.find((c) => existsSync(c));
  if (found) return cli(found);
  try {
    return cli(path.join(path.dirname(createRequire(import.meta.url).resolve('npm/package.json')), 'bin', 'npm-cli.js'));
  } catch {
    // Not installed as a dependency: PATH is next.
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    // Windows' npm.cmd needs a shell; the npm-cli.js installed beside it does not.
    if (process.platform === 'win32') {
      const script = path.join(dir, 'node_modules', 'npm', 'bin', 'npm-cli.js');
      if (existsSync(script)) return cli(script);
      continue;
    }
    const file = path.join(dir, 'npm');
    try {
      accessSync(file, constants.X_OK);
    } catch {
      continue;
    }
    // Usually a link to npm-cli.js: run by this Node, whatever `node` the PATH would pick.
    const real = realpathSync(file);
    return real.endsWith('.js') ? cli(real) : { file, args: [] };
  }
  return undefined;
}

/** What npm_not_found says: where npm was looked for and what to do. */
export function npmNotFoundMessage(): string {
  return `npm was not found (beside ${process.execPath}, as a dependency of Runnel, or on PATH): install npm or put it on PATH to install node modules`;
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

/**
 * Runs npm with arguments as an array (no shell); each output line is logged at info level.
 * Rejects with npm_not_found when there is no npm to run.
 */
export function runNpm(args: string[], { cwd, timeoutMs, log, onLine }: NpmOptions): Promise<NpmResult> {
  const npm = findNpm();
  if (!npm) return Promise.reject(new RunnelError('npm_not_found', npmNotFoundMessage()));
  return new Promise((resolve, reject) => {
    const child = spawn(npm.file, [...npm.args, ...args], {
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
