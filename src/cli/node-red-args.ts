import path from 'node:path';

/**
 * Node-RED's command line (its red.js, parsed there by nopt), read the way nopt reads it: long
 * options by a unique prefix (`--verb`), `--opt=value`, short options grouped (`-vp 1881`), a
 * boolean followed by `true`/`false` takes it, `--no-telemetry`, and `--` ends the options. As in
 * Node-RED an unknown option is a boolean flag that changes nothing (its value, if it had one,
 * becomes a positional); the caller warns about it. Unlike nopt, a port that is not a port and an
 * option missing its value are errors rather than silently dropped.
 */

export interface NodeRedArgs {
  help: boolean;
  version: boolean;
  verbose: boolean;
  safe: boolean;
  port?: number;
  /** Absolute, as nopt's `path` type makes it. */
  settings?: string;
  /** Absolute, as nopt's `path` type makes it. */
  userDir?: string;
  title?: string;
  /** `key=value` or `@file.json`, in order. */
  define: string[];
  /** The first positional: the flows file. */
  flowFile?: string;
  /** Options red.js does not know, as typed. */
  unknown: string[];
}

class NodeRedArgsError extends Error {}

type Kind = 'boolean' | 'string' | 'path' | 'number' | 'list';
const OPTIONS: Record<string, Kind> = {
  help: 'boolean', port: 'number', settings: 'path', title: 'string', userDir: 'path',
  verbose: 'boolean', safe: 'boolean', version: 'boolean', define: 'list', telemetry: 'boolean',
};
/** `-t` is red.js's second help (it reserves `-t`, so that it is not taken for `--title`). */
const SHORT: Record<string, string> = { '?': 'help', p: 'port', s: 'settings', t: 'help', u: 'userDir', v: 'verbose', D: 'define' };

export const NODE_RED_USAGE = `Usage: node-red [-v] [-?] [--settings settings.js] [--userDir DIR]
                [--port PORT] [--title TITLE] [--safe] [flows.json]

Options:
  -p, --port     PORT  port to listen on
  -s, --settings FILE  use specified settings file
      --title    TITLE process window title
  -u, --userDir  DIR   use specified user directory
  -v, --verbose        enable verbose output
      --safe           enable safe mode
  -D, --define   X=Y   overwrite value in settings file
      --version        show version information
      --no-telemetry   accepted; Runnel sends nothing anywhere
  -?, --help           show this help`;

export function parseNodeRedArgs(argv: readonly string[], cwd = process.cwd()): NodeRedArgs {
  const out: NodeRedArgs = { help: false, version: false, verbose: false, safe: false, define: [], unknown: [] };
  const positionals: string[] = [];
  const args = [...argv];
  const set = (name: string, typed: string, inline: string | undefined) => {
    const kind = OPTIONS[name]!;
    if (kind === 'boolean') {
      let value = true;
      if (inline !== undefined) value = inline !== 'false';
      else if (args[0] === 'true' || args[0] === 'false') value = args.shift() === 'true';
      assignBoolean(out, name, value);
      return;
    }
    const value = inline ?? (args[0] !== undefined && !args[0].startsWith('-') ? args.shift() : undefined);
    if (value === undefined) throw new NodeRedArgsError(`${typed} needs a value`);
    if (kind === 'list') out.define.push(value);
    else if (kind === 'path') out[name as 'settings' | 'userDir'] = path.resolve(cwd, value);
    else if (kind === 'string') out.title = value;
    else {
      if (!/^\d+$/.test(value) || Number(value) > 65535) throw new NodeRedArgsError(`${typed} must be a port number (0 to 65535), got ${value}`);
      out.port = Number(value);
    }
  };
  while (args.length > 0) {
    const arg = args.shift()!;
    if (arg === '--') {
      positionals.push(...args.splice(0));
    } else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const typed = eq < 0 ? arg : arg.slice(0, eq);
      const inline = eq < 0 ? undefined : arg.slice(eq + 1);
      const name = longName(typed.slice(2));
      if (name !== undefined) set(name, typed, inline);
      else if (typed.startsWith('--no-') && longName(typed.slice(5)) === 'telemetry') assignBoolean(out, 'telemetry', false);
      else out.unknown.push(typed);
    } else if (arg.startsWith('-') && arg.length > 1) {
      const letters = arg.slice(1);
      const name = SHORT[letters];
      if (name !== undefined) set(name, arg, undefined);
      else if ([...letters].every((c) => SHORT[c] !== undefined)) args.unshift(...[...letters].map((c) => `-${c}`));
      else out.unknown.push(arg);
    } else {
      positionals.push(arg);
    }
  }
  out.flowFile = positionals[0];
  return out;
}

/** The option a long name (or a unique prefix of one, as nopt allows) names. */
function longName(typed: string): string | undefined {
  if (Object.hasOwn(OPTIONS, typed)) return typed;
  const matches = Object.keys(OPTIONS).filter((name) => typed !== '' && name.startsWith(typed));
  return matches.length === 1 ? matches[0] : undefined;
}

function assignBoolean(out: NodeRedArgs, name: string, value: boolean): void {
  // --no-telemetry: Runnel sends nothing anywhere, so there is nothing to turn off.
  if (name === 'telemetry') return;
  out[name as 'help' | 'version' | 'verbose' | 'safe'] = value;
}
