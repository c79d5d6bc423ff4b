import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/base/log.js';
import type { LogLevel } from '../../src/base/log.js';

/** A logger whose output a test can read back. */
export interface CapturedLog {
  log: Logger;
  /** The stream the lines are written to, for code that builds its own logger (startRunnel's logDestination). */
  sink: Writable;
  /** Every line written so far, as written (pino's JSON text). */
  raw: string[];
  /** The lines so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  /** Messages of the lines at a pino level (30 info, 40 warn, 45 audit, 50 error). */
  messages(level: number): string[];
}

export function captureLog(level: LogLevel = 'debug'): CapturedLog {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      raw.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    log: createLogger(level, sink),
    sink,
    raw,
    lines,
    messages: (at) => lines().filter((l) => l.level === at).map((l) => String(l.msg)),
  };
}
