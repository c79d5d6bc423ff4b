/**
 * moment 2.30's string parsing for `$moment(string)` and `$moment(string, format)`: ISO 8601
 * first, then `Date`'s own parser, or a format's tokens read leniently (each token's pattern is
 * looked for anywhere in what is left, as moment does without strict mode). Readings without an
 * offset are local time. Each function returns an instant, NaN for input moment deems invalid.
 */
import { daysFromCivil, daysInMonth, DAY_MS, wallTime } from './civil.js';
import { formatTokens } from './date-format.js';
import { TOKENS } from './date-tokens.js';
import { LOCAL_ZONE } from './time-zone.js';

const YEAR = 0, MONTH = 1, DATE = 2, HOUR = 3, MINUTE = 4, SECOND = 5, MILLI = 6;
type Fields = (number | undefined)[];

/** moment's toInt: truncation, with anything unnumeric as 0. */
function toInt(value: string | number): number {
  const n = +value;
  return n !== 0 && Number.isFinite(n) ? Math.trunc(n) : 0;
}
/** A fraction of a second in any number of digits, truncated to milliseconds. */
const fractionMillis = (digits: string) => toInt(Number(`0.${digits}`) * 1000);
const twoDigitYear = (digits: string) => toInt(digits) + (toInt(digits) > 68 ? 1900 : 2000);

/** moment's offsetFromString for "Z", "+05", "+0530" and "+05:30": minutes east. */
function offsetMinutes(text: string): number {
  const parts = text.match(/[+-]|\d\d/g) ?? ['-', '0', '0'];
  const minutes = Number(parts[1] ?? 0) * 60 + toInt(parts[2] ?? 0);
  return minutes === 0 ? 0 : parts[0] === '+' ? minutes : -minutes;
}

/** One local day later, keeping the wall time: moment's `add(1, 'd')` for a reading of 24:00. */
function nextLocalDay(time: number): number {
  const f = LOCAL_ZONE.fields(time, 0);
  return LOCAL_ZONE.resolve(wallTime(f.year, f.month, f.date + 1, f.hours, f.minutes, f.seconds, f.millis), 0)[0];
}

/** moment's utcOffset(string): the last offset in the text, or undefined when there is none. */
export function offsetFromString(text: string): number | undefined {
  const found = text.match(/Z|[+-]\d\d(?::?\d\d)?/gi);
  return found ? offsetMinutes(found[found.length - 1]) : undefined;
}

/**
 * moment's configFromArray and checkOverflow: missing leading date fields are today's, later
 * ones their minimum; any field out of range makes the whole reading invalid. Also what
 * `moment([year, month, ...])` reads.
 */
export function fromFields(a: Fields, offset?: number): number {
  const now = new Date();
  const today = offset === undefined ? [now.getFullYear(), now.getMonth(), now.getDate()]
    : [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  let i = 0;
  for (; i < 3 && a[i] === undefined; i++) a[i] = today[i];
  for (; i < 7; i++) a[i] ??= i === DATE ? 1 : 0;
  const [year, month, date, hour, minute, second, millis] = a as number[];
  const midnightNext = hour === 24 && minute === 0 && second === 0 && millis === 0;
  if (month < 0 || month > 11 || date < 1 || date > daysInMonth(year, month)
    || hour < 0 || (hour > 23 && !midnightNext) || minute < 0 || minute > 59
    || second < 0 || second > 59 || millis < 0 || millis > 999) return NaN;
  const wall = wallTime(year, month, date, midnightNext ? 0 : hour, minute, second, millis);
  const time = offset === undefined ? LOCAL_ZONE.resolve(wall, 0)[0] : new Date(wall - offset * 6e4).getTime();
  return midnightNext ? nextLocalDay(time) : time;
}

// moment's own ISO 8601 shapes, extended and basic.
const EXTENDED_ISO = /^\s*((?:[+-]\d{6}|\d{4})-(?:\d\d-\d\d|W\d\d-\d|W\d\d|\d\d\d|\d\d))(?:(T| )(\d\d(?::\d\d(?::\d\d(?:[.,]\d+)?)?)?)([+-]\d\d(?::?\d\d)?|\s*Z)?)?$/;
const BASIC_ISO = /^\s*((?:[+-]\d{6}|\d{4})(?:\d\d\d\d|W\d\d\d|W\d\d|\d\d\d|\d\d|))(?:(T| )(\d\d(?:\d\d(?:\d\d(?:[.,]\d+)?)?)?)([+-]\d\d(?::?\d\d)?|\s*Z)?)?$/;
const CALENDAR_DATE = /^([+-]\d{6}|\d{4})-?(\d\d)-?(\d\d)$/;
const ORDINAL_DATE = /^(\d{4})-?(\d{3})$/;
// These two take no time of day.
const YEAR_MONTH = /^(\d{4})-?(\d\d)$/;
const YEAR_ONLY = /^(\d{4})$/;
const TIME = /^(\d\d)(\d\d)?(\d\d)?(?:[.,](\d+))?$/;

/** Date fields of an ISO date part, or undefined for one moment rejects (week dates are not read here). */
function isoDate(text: string, hasTime: boolean): Fields | undefined {
  let m = CALENDAR_DATE.exec(text);
  if (m) return [toInt(m[1]), toInt(m[2]) - 1, toInt(m[3])];
  m = ORDINAL_DATE.exec(text);
  if (m) {
    const year = toInt(m[1]);
    const dayOfYear = toInt(m[2]);
    if (dayOfYear < 1 || dayOfYear > daysFromCivil(year + 1, 0, 1) - daysFromCivil(year, 0, 1)) return undefined;
    const date = new Date((daysFromCivil(year, 0, 1) + dayOfYear - 1) * DAY_MS);
    return [year, date.getUTCMonth(), date.getUTCDate()];
  }
  if (hasTime) return undefined;
  m = YEAR_MONTH.exec(text);
  if (m) return [toInt(m[1]), toInt(m[2]) - 1];
  m = YEAR_ONLY.exec(text);
  return m ? [toInt(m[1])] : undefined;
}

/** An ISO 8601 string's instant; undefined when the string is not ISO-shaped at all. */
export function parseIso(text: string): number | undefined {
  const m = EXTENDED_ISO.exec(text) ?? BASIC_ISO.exec(text);
  if (!m) return undefined;
  const fields = isoDate(m[1], m[3] !== undefined);
  if (!fields) return NaN;
  if (m[3] !== undefined) {
    const t = TIME.exec(m[3].replace(/:/g, ''));
    if (!t) return NaN;
    fields[HOUR] = toInt(t[1]);
    fields[MINUTE] = t[2] === undefined ? undefined : toInt(t[2]);
    fields[SECOND] = t[3] === undefined ? undefined : toInt(t[3]);
    fields[MILLI] = t[4] === undefined ? undefined : fractionMillis(t[4]);
  }
  return fromFields(fields, m[4] === undefined ? undefined : offsetMinutes(m[4].trim()));
}

interface Reading {
  fields: Fields;
  offset?: number;
  meridiem?: string;
  /** Set by X and x, which give the instant outright. */
  time?: number;
}

interface ParseToken {
  pattern: RegExp;
  read(input: string, reading: Reading): void;
}

const set = (index: number, convert: (input: string) => number = toInt): ParseToken['read'] =>
  (input, reading) => {
    reading.fields[index] = convert(input);
  };
const ONE_OR_TWO = /\d\d?/;
const MILLIS: ParseToken = { pattern: /\d{1,3}/, read: set(MILLI, fractionMillis) };
const OFFSET: ParseToken = { pattern: /Z|[+-]\d\d(?::?\d\d)?/i, read: (input, r) => void (r.offset = offsetMinutes(input)) };
const MERIDIEM: ParseToken = { pattern: /[ap]\.?m?\.?/i, read: (input, r) => void (r.meridiem = input) };

// The tokens moment reads numerically, with its lenient patterns.
const PARSE_TOKENS = new Map<string, ParseToken>([
  ['YYYY', { pattern: /\d{1,4}/, read: set(YEAR, (input) => (input.length === 2 ? twoDigitYear(input) : toInt(input))) }],
  ['YY', { pattern: ONE_OR_TWO, read: set(YEAR, twoDigitYear) }],
  ...['M', 'MM'].map((t): [string, ParseToken] => [t, { pattern: ONE_OR_TWO, read: set(MONTH, (input) => toInt(input) - 1) }]),
  ...['D', 'DD'].map((t): [string, ParseToken] => [t, { pattern: ONE_OR_TWO, read: set(DATE) }]),
  // moment keeps 12-hour readings as they are; the meridiem adjusts whichever hour token was used.
  ...['H', 'HH', 'h', 'hh'].map((t): [string, ParseToken] => [t, { pattern: ONE_OR_TWO, read: set(HOUR) }]),
  ...['m', 'mm'].map((t): [string, ParseToken] => [t, { pattern: ONE_OR_TWO, read: set(MINUTE) }]),
  ...['s', 'ss'].map((t): [string, ParseToken] => [t, { pattern: ONE_OR_TWO, read: set(SECOND) }]),
  ['S', MILLIS], ['SS', MILLIS], ['SSS', MILLIS],
  ...[4, 5, 6, 7, 8, 9].map((n): [string, ParseToken] => ['S'.repeat(n), { pattern: /\d+/, read: set(MILLI, fractionMillis) }]),
  ['A', MERIDIEM], ['a', MERIDIEM], ['Z', OFFSET], ['ZZ', OFFSET],
  ['X', { pattern: /[+-]?\d+(\.\d{1,3})?/, read: (input, r) => void (r.time = new Date(parseFloat(input) * 1000).getTime()) }],
  ['x', { pattern: /[+-]?\d+/, read: (input, r) => void (r.time = new Date(toInt(input)).getTime()) }],
]);

/** moment's unescapeFormat: brackets and backslashes stripped, leaving the literal text to find. */
function literalPattern(token: string): RegExp {
  const text = token.replace('\\', '').replace(/\\(\[)|\\(\])|\[([^\][]*)\]|\\(.)/g, (_m, a, b, c, d) => a || b || c || d);
  return new RegExp(text.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&'));
}

/**
 * `moment(text, format)` without strict mode. A format token this parser does not read (month
 * and weekday names, ordinals, weeks, eras) makes the result invalid rather than silently wrong.
 */
export function parseWithFormat(text: string, format: string): number {
  const reading: Reading = { fields: [] };
  let rest = text;
  let parsedAny = false;
  for (const token of formatTokens(format)) {
    const parser = PARSE_TOKENS.get(token);
    if (!parser && TOKENS.has(token)) return NaN;
    const found = (parser?.pattern ?? literalPattern(token)).exec(rest);
    if (found) rest = rest.slice(found.index + found[0].length);
    if (!parser || !found) continue;
    parsedAny = true;
    parser.read(found[0], reading);
  }
  if (!parsedAny) return NaN;
  if (reading.time !== undefined) return reading.time;
  const { fields, meridiem } = reading;
  if (meridiem !== undefined) {
    // A meridiem with nothing else of the date read is moment's "meridiem without parts".
    if (!fields.some((v) => v !== undefined)) return NaN;
    const hour = fields[HOUR];
    const pm = meridiem.charAt(0).toLowerCase() === 'p';
    if (hour !== undefined && pm && hour < 12) fields[HOUR] = hour + 12;
    if (hour === 12 && !pm) fields[HOUR] = 0;
  }
  return fromFields(fields, reading.offset);
}
