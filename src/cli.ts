import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { DEFAULT_USER_DIR, resolveSettings, RUNTIME_SECRET_ENV, SettingsError, type Settings } from './settings/settings.js';
import { loadSettingsFile, userDirSettingsFile } from './settings/file.js';
import { startRunnel, type RunnelInstance } from './runnel.js';
import { hashPassword } from './auth/passwords.js';
import { RUNNEL_VERSION } from './base/version.js';
import { startStopWatchdog, STOP_SIGNALS } from './watchdog/stop-watchdog.js';
import { createLogger } from './base/log.js';
import { ExportError, exportNodeRed } from './export/node-red.js';
import { formatStartSummary, startSummary } from './start-summary.js';

/** What a stop may take beyond nodeCloseTimeout (closing the listener, flushing storage) before the watchdog kills. */
const STOP_BOUND_MS = 5000;

const USAGE = `Usage:
  runnel [start] [--settings FILE] [--user-dir DIR] [--port N] [--host HOST] [--safe]
  runnel export --format node-red [--out DIR] [--settings FILE] [--user-dir DIR]
                            write the flows and credentials as Node-RED reads them (default: into the user dir)
  runnel hash-pw            read a password (stdin or prompt), print a bcrypt hash
  runnel --version | --help
Without --settings, DIR/settings.js is the settings file when it exists (DIR: --user-dir, else ${DEFAULT_USER_DIR}).`;

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        settings: { type: 'string', short: 's' },
        port: { type: 'string', short: 'p' },
        host: { type: 'string' },
        'user-dir': { type: 'string', short: 'u' },
        safe: { type: 'boolean' },
        format: { type: 'string' },
        out: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (e) {
    return fail(`runnel: ${(e as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`${RUNNEL_VERSION}\n`);
    return 0;
  }
  const command = positionals[0] ?? 'start';
  try {
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
    if (command === 'hash-pw') return await hashPw();
    if (command === 'export') return await exportTo(values);
    if (command !== 'start') throw new UsageError(`unknown command ${command}`);
    if (values.format !== undefined || values.out !== undefined) throw new UsageError('--format and --out are options of runnel export');
    return await serve(await settingsFrom(values));
  } catch (e) {
    if (e instanceof UsageError) return fail(`runnel: ${e.message}\n${USAGE}`);
    if (e instanceof ExportError) return fail(`runnel: export: ${e.message}`);
    return failToStart(e, false);
  }
}

/** One line on stderr for what stops a start (with the stack too when `verbose` and the cause is not the user's). */
export function failToStart(e: unknown, verbose: boolean): number {
  if (e instanceof SettingsError) return fail(`runnel: invalid settings: ${e.message}`);
  const err = e as NodeJS.ErrnoException & { port?: number };
  if (err.code === 'EADDRINUSE') return fail(`runnel: cannot listen: address already in use (${err.message.replace(/^listen EADDRINUSE: address already in use /, '')})`);
  if (err.code === 'EACCES' || err.code === 'EADDRNOTAVAIL') return fail(`runnel: cannot listen: ${err.message}`);
  return fail(verbose && typeof err.stack === 'string' ? `runnel: ${err.stack}` : `runnel: ${err.message ?? String(e)}`);
}

export function fail(message: string): number {
  process.stderr.write(`${message}\n`);
  return 1;
}

type Options = { settings?: string; port?: string; host?: string; 'user-dir'?: string; safe?: boolean; format?: string; out?: string };

/** The settings file (`--settings`, else the user dir's settings.js, as Node-RED), then the flags over it. */
async function settingsFrom(values: Options): Promise<Settings> {
  let raw: Record<string, unknown> = {};
  const file = values.settings ?? (await userDirSettingsFile(path.resolve(values['user-dir'] ?? DEFAULT_USER_DIR)));
  let absolute: string | undefined;
  if (file !== undefined) {
    const loaded = await loadSettingsFile(file);
    raw = { ...loaded.raw };
    absolute = loaded.absolute;
  }
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port)) throw new UsageError(`--port must be a number, got ${values.port}`);
    raw.uiPort = Number(values.port);
  }
  if (values.host !== undefined) raw.uiHost = values.host;
  if (values['user-dir'] !== undefined) raw.userDir = values['user-dir'];
  if (values.safe) raw.safeMode = true;
  return resolveSettings(raw, process.cwd(), absolute);
}

/** Runs Runnel on `settings` until a stop signal; the exit status. `title` names the process once it listens. */
export async function serve(settings: Settings, title?: string): Promise<number> {
  // Read once: the children flows and modules start (exec, npm and its install scripts) and code
  // with host access (process.env) must not inherit the database password either.
  for (const name of RUNTIME_SECRET_ENV) delete process.env[name];
  // Signal handlers go in before anything starts: a signal during start-up stops the server once it is up.
  let signalled: string | undefined;
  let onSignal: (signal: string) => void = (signal) => (signalled = signal);
  // SIGHUP is what a closing terminal sends: Node's default for it is to die at once, losing the
  // file context written since its last flush. Node-RED stops gracefully on it too.
  for (const signal of STOP_SIGNALS) process.once(signal, () => onSignal(signal));
  let instance: RunnelInstance | undefined;
  let unwatched = false;
  const warnUnwatched = () => instance?.log.warn('this Node.js cannot watch signals off the main thread: a stop signal waits for running code to yield');
  // The watchdog thread costs ~9 MiB: it starts with the first code that could hold the main
  // thread (a flow's nodes, an installed module), so a runtime without flows does without it.
  const startWatchdog = () =>
    void startStopWatchdog(settings.nodeCloseTimeout + STOP_BOUND_MS).then((watching) => {
      unwatched = !watching;
      if (unwatched) warnUnwatched();
    });
  instance = await startRunnel(settings, { beforeForeignCode: startWatchdog });
  if (unwatched) warnUnwatched();
  process.on('unhandledRejection', (reason) => instance.log.error({ err: reason }, 'unhandled promise rejection in a node'));
  if (!settings.adminAuth && !['127.0.0.1', 'localhost', '::1'].includes(settings.uiHost)) {
    instance.log.warn(`the admin API on ${settings.uiHost} has no adminAuth: anyone who can reach it controls this runtime`);
  }
  return new Promise<number>((resolve) => {
    onSignal = (signal) => {
      instance.log.info(`${signal}: stopping`);
      instance.stop().then(
        () => resolve(0),
        (err) => {
          instance.log.error({ err }, 'error while stopping');
          resolve(1);
        },
      );
    };
    const format = settings.logging.format ?? (process.stdout.isTTY ? 'text' : 'json');
    process.stdout.write(formatStartSummary(instance.url, startSummary(settings, instance.runtime.credentialKey), format));
    if (title !== undefined) process.title = title;
    if (signalled) onSignal(signalled);
  });
}

async function exportTo(values: Options): Promise<number> {
  const format = values.format ?? 'node-red';
  if (format !== 'node-red') throw new ExportError(`unknown format ${JSON.stringify(format)}: the one format is node-red`);
  const settings = await settingsFrom(values);
  const out = values.out === undefined ? settings.userDir : path.resolve(values.out);
  process.stdout.write(`runnel: exporting ${settings.userDir} (${settings.storage.type} storage) for Node-RED into ${out}\n`);
  const log = createLogger(settings.logging.level, undefined, settings.logging.format);
  const result = await exportNodeRed(settings, out, log);
  log.flush();
  const install = result.modules.length > 0 ? `run npm install in ${result.dir} (its package.json lists ${count(result.modules.length, 'node module')}: ${result.modules.join(', ')}), then ` : '';
  process.stdout.write(
    `runnel: exported ${count(result.nodes, 'flow node')} and the credentials of ${count(result.credentials, 'node')} (${result.written.join(', ')}); `
    + `${install}start Node-RED with: node-red --userDir ${result.dir}\n`,
  );
  for (const note of result.notes) process.stdout.write(`runnel: note: ${note}\n`);
  return 0;
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

async function hashPw(): Promise<number> {
  const password = await readPassword();
  if (!password) return fail('runnel: the password must not be empty');
  process.stdout.write(`${await hashPassword(password, 10)}\n`);
  return 0;
}

async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  // Hide the typed characters: echo nothing but the prompt.
  (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
    if (s.startsWith('Password')) process.stderr.write(s);
  };
  const answer = await new Promise<string>((resolve) => rl.question('Password: ', resolve));
  rl.close();
  process.stderr.write('\n');
  return answer;
}
