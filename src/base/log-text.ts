import type { DestinationStream } from 'pino';

/**
 * The log for people (`logging.format: "text"`, the default on a terminal): each of pino's JSON
 * lines becomes `<time> [<level>] <message>`, the other fields follow as compact JSON and an
 * error's stack is indented below. A node's line is tagged as Node-RED tags it,
 * `[<type>:<name, else id>]` before the message, so rules written for Node-RED's log match it.
 */

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 45: 'audit', 50: 'error', 60: 'fatal' };

type Flushable = DestinationStream & { flush?: (cb?: (err?: Error) => void) => void };

export function formatLogLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, err, ...rest } = entry;
  const name = LEVEL_NAMES[level as number] ?? String(level);
  const tag = nodeTag(rest.node);
  if (tag) delete rest.node;
  const fields = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  const error = err as { message?: string; stack?: string } | undefined;
  const message = typeof msg === 'string' && msg !== '' ? msg : (error?.message ?? '');
  const stack = typeof error?.stack === 'string' ? `\n    ${error.stack.split('\n').join('\n    ')}` : '';
  return `${String(time ?? '')} [${name}] ${tag}${message}${fields}${stack}\n`;
}

function nodeTag(node: unknown): string {
  if (node === null || typeof node !== 'object') return '';
  const { id, type, name } = node as { id?: unknown; type?: unknown; name?: unknown };
  if (typeof type !== 'string' || typeof id !== 'string') return '';
  return `[${type}:${typeof name === 'string' && name !== '' ? name : id}] `;
}

export function textDestination(out: Flushable): Flushable {
  return {
    write: (line: string) => out.write(formatLogLine(line)),
    flush: (cb?: (err?: Error) => void) => (out.flush ? out.flush(cb) : cb?.()),
  };
}
