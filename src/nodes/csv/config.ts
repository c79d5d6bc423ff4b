import type { Msg, NodeConfig } from '../../runtime/red-api/red-api-types.js';
/**
 * The csv node's settings read as Node-RED reads them, for both of its modes: `\t`, `\n` and `\r`
 * written out in the separator and newline, `strings` absent meaning "parse numbers", the flags
 * taken by truthiness except where Node-RED compares with `true`.
 */

export interface CsvConfig {
  temp: string;
  sep: string;
  ret: string;
  multi: string;
  /** Node-RED reads a header row only for `true`, but shifts part counts for any truthy value. */
  hdrin: unknown;
  hdrout: string;
  sendHeaders: boolean;
  skip: number;
  parseNumeric: boolean;
  includeEmpty: boolean;
  includeNull: boolean;
}

/** What a csv mode needs from its node. */
export interface CsvHost {
  warn(text: string): void;
  status(status: Record<string, unknown>): void;
  clone(msg: Msg): Msg;
  ensureString(value: unknown): string;
}

const unescape = (s: string) => s.replace(/\\t/g, '\t').replace(/\\n/g, '\n').replace(/\\r/g, '\r');

/** `defaultRet` differs: CRLF in rfc mode (RFC 4180 2.1), LF in legacy mode. */
export function readCsvConfig(n: NodeConfig, defaultRet: string): CsvConfig {
  let hdrout: unknown = n.hdrout || 'none';
  if (hdrout === true) hdrout = 'all';
  const parseNumeric = n.strings === undefined ? true : n.strings === true;
  return {
    temp: String(n.temp || ''),
    sep: unescape(String(n.sep || ',')),
    ret: unescape(String(n.ret || defaultRet)),
    multi: String(n.multi || 'one'),
    hdrin: n.hdrin || false,
    hdrout: String(hdrout),
    sendHeaders: hdrout === 'once' || hdrout === 'all',
    skip: parseInt(String(n.skip || 0), 10),
    parseNumeric,
    includeEmpty: !!n.include_empty_strings,
    includeNull: !!n.include_null_values,
  };
}

export const has = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/** Where a message to parse stands in its sequence (msg.parts), as both of Node-RED's parsers read it. */
export interface SequencePosition {
  parts: any;
  /** Header and skipped lines are read only from the first parts (those up to `skip`). */
  first: boolean;
  last: boolean;
  /** Lines already seen before this message. */
  lineCount: number;
}

export function sequencePosition(msg: Msg, skip: number): SequencePosition {
  const parts = has(msg, 'parts') ? msg.parts : undefined;
  if (parts === undefined) return { parts, first: true, last: false, lineCount: 0 };
  return { parts, first: !(parts.index > skip), last: has(parts, 'count') && parts.index + 1 >= parts.count, lineCount: parts.index };
}
