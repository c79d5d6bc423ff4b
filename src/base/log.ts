import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import { textDestination } from './log-text.js';

/** Audit sits between warn and error: shown at the default level, silenced only by error/fatal/silent. */
export const AUDIT_LEVEL = 45;

export type Logger = PinoLogger<'audit'>;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'text' | 'json';

/** `format` unset: text on a terminal, JSON lines (for machines) otherwise. A given destination gets JSON. */
export function createLogger(level: LogLevel, destination?: DestinationStream, format?: LogFormat): Logger {
  return pino<'audit'>(
    {
      level,
      customLevels: { audit: AUDIT_LEVEL },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      // Defence in depth: whatever a caller hands the logger, these never reach the output.
      redact: {
        paths: ['password', '*.password', 'token', '*.token', 'access_token', '*.access_token', 'credentials', '*.credentials', 'req.headers.authorization'],
        censor: '[redacted]',
      },
    },
    destination ?? stdoutDestination(format ?? (process.stdout.isTTY ? 'text' : 'json')),
  );
}

function stdoutDestination(format: LogFormat): DestinationStream {
  const out = pino.destination({ dest: 1, sync: false });
  return format === 'text' ? textDestination(out) : out;
}
