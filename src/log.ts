import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import type { LogLevel } from './settings.js';

/** Audit sits between warn and error: shown at the default level, silenced only by error/fatal/silent. */
export const AUDIT_LEVEL = 45;

export type Logger = PinoLogger<'audit'>;

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
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
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
