import type { DestinationStream } from 'pino';

/**
 * Node-RED's custom log handlers (`logging.<name>.handler` in settings.js): each gets every log
 * entry in Node-RED's shape (`{level, msg, timestamp, type?, id?, name?, event?, ...}`) at
 * Node-RED's numeric levels, filtered as @node-red/util's LogHandler does: entries at or below its
 * level, plus audit entries when `audit` is on (metric entries when `metrics` is on: Runnel logs
 * none, its metrics are GET /metrics). They read the JSON lines pino writes.
 */

export const NODE_RED_LEVELS = { off: 1, fatal: 10, error: 20, warn: 30, info: 40, debug: 50, trace: 60, audit: 98, metric: 99 } as const;

export interface NodeRedLogEntry {
  level: number;
  msg: unknown;
  timestamp: number;
  [key: string]: unknown;
}

export interface LogHandlerSpec {
  /** Node-RED's level number the handler reports up to (`info` = 40). */
  level: number;
  audit: boolean;
  metrics: boolean;
  handle: (entry: NodeRedLogEntry) => void;
}

/** pino's level number → Node-RED's. */
const FROM_PINO: Record<number, number> = { 10: 60, 20: 50, 30: 40, 40: 30, 45: 98, 50: 20, 60: 10 };
/** Node-RED's level number → the lowest pino level a handler at it needs to see. */
const TO_PINO: Record<number, number> = { 1: Infinity, 10: 60, 20: 50, 30: 40, 40: 30, 50: 20, 60: 10, 98: 10, 99: 10 };
const AUDIT_PINO = 45;

/** The lowest pino level any handler needs: the logger's level may not be above it. */
export function handlersPinoLevel(handlers: readonly LogHandlerSpec[]): number {
  return Math.min(...handlers.map((h) => Math.min(TO_PINO[h.level] ?? 30, h.audit ? AUDIT_PINO : Infinity)));
}

function reports(handler: LogHandlerSpec, level: number): boolean {
  return (level === NODE_RED_LEVELS.metric && handler.metrics) || (level === NODE_RED_LEVELS.audit && handler.audit) || level <= handler.level;
}

/** One of pino's JSON lines in Node-RED's shape: a node's entry carries its `type`, `id`, `name` and `z`. */
function toNodeRedEntry(line: Record<string, unknown>): NodeRedLogEntry {
  const { level, time, msg, node, err, ...rest } = line;
  const nodeFields = typeof node === 'object' && node !== null ? (node as Record<string, unknown>) : {};
  const error = err as { message?: string } | undefined;
  return {
    ...rest,
    ...nodeFields,
    level: FROM_PINO[level as number] ?? NODE_RED_LEVELS.info,
    msg: typeof msg === 'string' && msg !== '' ? msg : (error?.message ?? msg),
    timestamp: typeof time === 'string' ? Date.parse(time) : typeof time === 'number' ? time : Date.now(),
  };
}

/** A pino destination handing each entry to the handlers that report it; a throwing handler is reported on stderr, not fatal. */
export function handlersDestination(handlers: readonly LogHandlerSpec[]): DestinationStream {
  return {
    write(line: string) {
      let entry: NodeRedLogEntry;
      try {
        entry = toNodeRedEntry(JSON.parse(line) as Record<string, unknown>);
      } catch {
        return;
      }
      for (const handler of handlers) {
        if (!reports(handler, entry.level)) continue;
        try {
          handler.handle(structuredClone(entry));
        } catch (e) {
          process.stderr.write(`A custom log handler (logging settings) threw: ${(e as Error).message}\n`);
        }
      }
    },
  };
}
