import { NODE_RED_LEVELS, type NodeRedLogEntry } from '../base/log-handlers.js';
import type { LogExtensions, LogFormat, LogLevel } from '../base/log.js';

/**
 * Node-RED's `logging` setting: the console logger's `level` (Runnel also takes `logging.level`),
 * `format` (Runnel's), `audit`, and custom loggers — every other entry with a `handler`, a function
 * `(config) => (entry) => void` that Node-RED calls once at start with its own entry.
 */

export interface CustomLogHandler {
  name: string;
  /** Node-RED's level number the handler reports up to. */
  level: number;
  audit: boolean;
  metrics: boolean;
  /** Node-RED's `handler(config)`: called once, when the logger is made. */
  create: () => (entry: NodeRedLogEntry) => void;
}

export interface LoggingSettings {
  level: LogLevel;
  /** Unset: text when stdout is a terminal, JSON lines otherwise. */
  format?: LogFormat;
  /** `logging.console.audit`; unset shows audit lines (Runnel's default). */
  consoleAudit?: boolean;
  handlers: CustomLogHandler[];
}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** Node-RED's level names that are not Runnel's: `audit` and `metric` show every line, `off` none. */
const NODE_RED_LOG_LEVELS: Record<string, LogLevel> = { off: 'silent', audit: 'trace', metric: 'trace' };
/** Entries of `logging` that are not loggers. */
export const RUNNEL_LOGGING_KEYS = new Set(['console', 'level', 'format']);

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseLogging(v: unknown, fail: (message: string) => never): LoggingSettings {
  const logging = v === undefined ? {} : v;
  if (!isObject(logging)) fail('logging must be an object');
  const console = isObject(logging.console) ? logging.console : undefined;
  const levelKey = console ? 'logging.console.level' : 'logging.level';
  const levelRaw = (console ? console.level : logging.level) ?? 'info';
  const level = typeof levelRaw === 'string' && Object.hasOwn(NODE_RED_LOG_LEVELS, levelRaw) ? NODE_RED_LOG_LEVELS[levelRaw] : (levelRaw as LogLevel);
  if (!LOG_LEVELS.includes(level)) fail(`${levelKey} must be one of ${[...LOG_LEVELS, ...Object.keys(NODE_RED_LOG_LEVELS)].join(', ')}`);
  const format = logging.format;
  if (!(format === undefined || format === 'text' || format === 'json')) fail('logging.format must be "text" or "json"');
  const flag = (entry: Raw, key: string, where: string) => {
    if (entry[key] !== undefined && typeof entry[key] !== 'boolean') fail(`logging.${where}.${key} must be true or false`);
    return entry[key] === true;
  };
  if (console) flag(console, 'metrics', 'console');
  const handlers: CustomLogHandler[] = [];
  for (const [name, entry] of Object.entries(logging)) {
    if (RUNNEL_LOGGING_KEYS.has(name) || !isObject(entry) || entry.handler === undefined) continue;
    const handler = entry.handler;
    if (typeof handler !== 'function') fail(`logging.${name}.handler must be a function (config) => (entry) => void, from a .js settings file`);
    const levelName = entry.level ?? 'info';
    if (typeof levelName !== 'string' || !Object.hasOwn(NODE_RED_LEVELS, levelName)) fail(`logging.${name}.level must be one of ${Object.keys(NODE_RED_LEVELS).join(', ')}`);
    handlers.push({
      name,
      level: NODE_RED_LEVELS[levelName as keyof typeof NODE_RED_LEVELS],
      audit: flag(entry, 'audit', name),
      metrics: flag(entry, 'metrics', name),
      create: () => {
        const fn: unknown = (handler as (config: Raw) => unknown)(entry);
        if (typeof fn !== 'function') throw new Error(`logging.${name}.handler(config) must return a function (entry) => void`);
        return fn as (entry: NodeRedLogEntry) => void;
      },
    });
  }
  return {
    level,
    ...(format === undefined ? {} : { format: format as LogFormat }),
    ...(console?.audit === undefined ? {} : { consoleAudit: flag(console, 'audit', 'console') }),
    handlers,
  };
}

/** What createLogger adds to the console logger for these settings; calls each `handler(config)` once. */
export function logExtensions(logging: LoggingSettings): LogExtensions {
  return {
    handlers: logging.handlers.map((h) => ({ level: h.level, audit: h.audit, metrics: h.metrics, handle: h.create() })),
    ...(logging.consoleAudit === undefined ? {} : { consoleAudit: logging.consoleAudit }),
  };
}
