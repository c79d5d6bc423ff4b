import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import { handlersDestination, handlersPinoLevel, type LogHandlerSpec } from './log-handlers.js';
import { textDestination } from './log-text.js';

/** Audit sits between warn and error: shown at the default level, silenced only by error/fatal/silent. */
export const AUDIT_LEVEL = 45;

export type Logger = PinoLogger<'audit'>;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'text' | 'json';

/** What Node-RED's `logging` adds to the console logger: custom handlers, and the console's `audit` switch. */
export interface LogExtensions {
  handlers?: readonly LogHandlerSpec[];
  /** `logging.console.audit`: false leaves audit lines out of the console; unset shows them (Runnel's default). */
  consoleAudit?: boolean;
}

const PINO_LEVELS: Record<string, number> = { ...pino.levels.values, audit: AUDIT_LEVEL, silent: Infinity };

/** `format` unset: text on a terminal, JSON lines (for machines) otherwise. A given destination gets JSON. */
export function createLogger(level: LogLevel, destination?: DestinationStream, format?: LogFormat, extensions: LogExtensions = {}): Logger {
  const out = destination ?? stdoutDestination(format ?? (process.stdout.isTTY ? 'text' : 'json'));
  const console = extensions.consoleAudit === false ? withoutAudit(out) : out;
  const handlers = extensions.handlers ?? [];
  const handlerLevel = handlers.length > 0 ? handlersPinoLevel(handlers) : Infinity;
  if (handlerLevel === Infinity) return pino<'audit'>({ ...PINO_OPTIONS, level }, console);
  const streams = [{ level: handlerLevel, stream: handlersDestination(handlers) }];
  if (level !== 'silent') streams.push({ level: PINO_LEVELS[level], stream: console });
  const lowest = Math.min(handlerLevel, PINO_LEVELS[level]);
  const lowestName = Object.keys(PINO_LEVELS).find((name) => PINO_LEVELS[name] === lowest) ?? 'trace';
  return pino<'audit'>({ ...PINO_OPTIONS, level: lowestName }, pino.multistream(streams, { levels: PINO_LEVELS }));
}

const PINO_OPTIONS = {
  customLevels: { audit: AUDIT_LEVEL },
  base: undefined,
  timestamp: pino.stdTimeFunctions.isoTime,
  // Defence in depth: whatever a caller hands the logger, these never reach the output.
  redact: {
    paths: ['password', '*.password', 'token', '*.token', 'access_token', '*.access_token', 'credentials', '*.credentials', 'req.headers.authorization'],
    censor: '[redacted]',
  },
};

/** pino writes the level first, so an audit line is recognised without parsing it. */
function withoutAudit(out: DestinationStream & { flush?: (cb?: (err?: Error) => void) => void }): DestinationStream {
  const audit = `{"level":${AUDIT_LEVEL},`;
  return {
    write: (line: string) => (line.startsWith(audit) ? undefined : out.write(line)),
    ...(out.flush ? { flush: (cb?: (err?: Error) => void) => out.flush!(cb) } : {}),
  };
}

function stdoutDestination(format: LogFormat): DestinationStream {
  const out = pino.destination({ dest: 1, sync: false });
  return format === 'text' ? textDestination(out) : out;
}
