import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveSettings, type Settings } from '../settings/settings.js';
import { loadSettingsFile, userDirSettingsFile } from '../settings/file.js';
import { setObjectProperty } from '../runtime/util/properties.js';
import { NODE_RED_COMPAT_VERSION, RUNNEL_VERSION } from '../base/version.js';
import { fail, failToStart, serve } from '../cli.js';
import { NODE_RED_USAGE, parseNodeRedArgs, type NodeRedArgs } from './node-red-args.js';

/**
 * `node-red`: Runnel started by Node-RED's own command line, so that scripts, service units and
 * images that call `node-red` run Runnel unchanged. The settings are found, overridden and
 * defaulted as red.js does it: `--settings`, else `settings.js` in the user dir (`--userDir`, else
 * ~/.node-red); then `-D` definitions; then the flags, which win over both.
 */
export async function nodeRedMain(argv: string[]): Promise<number> {
  if (argv[0] === 'admin') return fail('node-red: "node-red admin" is not part of Runnel: node-red-admin (its own package) works against Runnel\'s admin API');
  let args: NodeRedArgs;
  try {
    args = parseNodeRedArgs(argv);
  } catch (e) {
    return fail(`node-red: ${(e as Error).message}\n${NODE_RED_USAGE}`);
  }
  if (args.help) {
    process.stdout.write(`Runnel v${RUNNEL_VERSION} (Node-RED ${NODE_RED_COMPAT_VERSION} command line)\n${NODE_RED_USAGE}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`Runnel v${RUNNEL_VERSION} (runs Node-RED ${NODE_RED_COMPAT_VERSION} flows)\nNode.js ${process.version}\n${os.type()} ${os.release()} ${os.arch()} ${os.endianness()}\n`);
    return 0;
  }
  for (const option of args.unknown) process.stderr.write(`node-red: ignoring unknown option ${option} (as Node-RED does)\n`);
  let settings: Settings;
  try {
    settings = await nodeRedSettings(args);
  } catch (e) {
    return failToStart(e, args.verbose);
  }
  try {
    return await serve(settings, args.title ?? 'node-red');
  } catch (e) {
    return failToStart(e, args.verbose);
  }
}

async function nodeRedSettings(args: NodeRedArgs): Promise<Settings> {
  const home = process.env.HOME || process.env.USERPROFILE || process.env.HOMEPATH;
  if (args.userDir === undefined && !home) throw new Error('Could not find user directory. Ensure $HOME is set for the current user, or use --userDir option');
  const userDir = args.userDir ?? path.join(home!, '.node-red');
  const file = args.settings ?? (await userDirSettingsFile(userDir));
  const loaded = file === undefined ? undefined : await loadSettingsFile(file);
  const raw: Record<string, unknown> = { ...loaded?.raw };
  try {
    for (const definition of args.define) define(raw, definition);
  } catch (e) {
    throw new Error(`Error processing -D option: ${(e as Error).message}`);
  }
  if (args.verbose) raw.verbose = true;
  const safeEnv = process.env.NODE_RED_ENABLE_SAFE_MODE;
  if (args.safe || (safeEnv && !/^false$/i.test(safeEnv))) raw.safeMode = true;
  if (args.port !== undefined) raw.uiPort = args.port;
  // Node-RED's default user dir is ~/.node-red whatever the settings file says nothing about.
  if (args.userDir !== undefined || raw.userDir === undefined) raw.userDir = args.userDir ?? userDir;
  if (args.flowFile !== undefined) raw.flowFile = flowFilePath(args.flowFile);
  const settings = await resolveSettings(raw, process.cwd(), loaded?.absolute);
  // Service units and containers read Node-RED's text lines from its stdout: `node-red` keeps them
  // (runnel start writes JSON lines when stdout is not a terminal), unless logging.format says otherwise.
  settings.logging.format ??= 'text';
  return settings;
}

/** red.js's `-D key=value` (the value JSON when it parses, else the string) and `-D @file.json` (each key of the object). */
function define(raw: Record<string, unknown>, definition: string): void {
  const match = /^(([^=]+)=(.+)|@(.*))$/.exec(definition);
  if (!match || match[4] === '') throw new Error(`Invalid syntax: '${definition}'`);
  if (match[4] === undefined) {
    let value: unknown = match[3];
    try {
      value = JSON.parse(match[3]!);
    } catch {
      // Not JSON: the string itself, as Node-RED keeps it.
    }
    setObjectProperty(raw, match[2]!, value, true);
    return;
  }
  const values = JSON.parse(readFileSync(match[4], 'utf8')) as Record<string, unknown>;
  for (const key of Object.keys(values)) setObjectProperty(raw, key, values[key], true);
}

/**
 * Where Node-RED's storage reads the flows file named on the command line: an absolute path or
 * `./…` as given, a name that exists in the working directory there, any other in the user dir.
 */
function flowFilePath(name: string): string {
  if (path.isAbsolute(name)) return name;
  if (name.startsWith('./') || existsSync(path.join(process.cwd(), name))) return path.resolve(name);
  return name;
}
