import { LONG_FORMATS, TOKENS, type TokenFormatter } from './date-tokens.js';
import { LOCAL_ZONE, zonedTime, type ZonedTime } from './time-zone.js';

/**
 * `moment(date).format(format)` in moment 2.x's default English locale, so `date` typed
 * properties (local time) and `$moment` in JSONata (any zone) format like Node-RED without a
 * moment dependency.
 */

// moment's own tokeniser, verbatim: how a format splits into tokens decides what a `\` escape
// covers ("\hmm" is literal "hmm"), and its `.` skips line breaks, which moment therefore drops.
const FORMATTING_TOKENS = /(\[[^\[]*\])|(\\)?([Hh]mm(ss)?|Mo|MM?M?M?|Do|DDDo|DD?D?D?|ddd?d?|do?|w[o|w]?|W[o|W]?|Qo?|N{1,5}|YYYYYY|YYYYY|YYYY|YY|y{2,4}|yo?|gg(ggg?)?|GG(GGG?)?|e|E|a|A|hh?|HH?|kk?|mm?|ss?|S{1,9}|x|X|zz?|ZZ?|.)/g;
const LONG_FORMAT_TOKENS = /(\[[^\[]*\])|(\\)?(LTS|LT|LL?L?L?|l{1,4})/g;
const DEFAULT_FORMAT = 'YYYY-MM-DDTHH:mm:ssZ';
// Formats come from flow configuration, so a handful are live at once; the bound only guards
// against a flow that builds format strings from message data.
const CACHE_LIMIT = 256;

type Formatter = (time: ZonedTime) => string;
const compiled = new Map<string, Formatter>();

/** moment's rule for text that is not a token: `[...]` loses its brackets, otherwise `\` is dropped. */
function literal(text: string): string {
  if (/\[[\s\S]/.test(text)) return text.replace(/^\[|\]$/g, '');
  return text.replace(/\\/g, '');
}

/** A format split into tokens and literals as moment splits it, for formatting and for parsing. */
export function formatTokens(format: string): string[] {
  // English long formats contain no L tokens, so moment's repeated expansion settles in one pass.
  const expanded = format.replace(LONG_FORMAT_TOKENS, (match) => LONG_FORMATS.get(match) ?? match);
  return Array.from(expanded.matchAll(FORMATTING_TOKENS), ([token]) => token);
}

function compile(format: string): Formatter {
  const parts: (string | TokenFormatter)[] = [];
  for (const token of formatTokens(format)) {
    const part = TOKENS.get(token) ?? literal(token);
    const previous = parts[parts.length - 1];
    if (typeof part === 'string' && typeof previous === 'string') parts[parts.length - 1] = previous + part;
    else parts.push(part);
  }
  return (time) => {
    let out = '';
    for (const part of parts) out += typeof part === 'string' ? part : part(time);
    return out;
  };
}

export function formatDate(date: Date, format: string): string {
  const time = date.getTime();
  if (Number.isNaN(time)) return 'Invalid date';
  return formatZoned(zonedTime(time, LOCAL_ZONE), format);
}

/** Formats a valid reading; an empty format is moment's default for a local moment. */
export function formatZoned(time: ZonedTime, format: string): string {
  const key = format || DEFAULT_FORMAT;
  let formatter = compiled.get(key);
  if (!formatter) {
    if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value as string);
    formatter = compile(key);
    compiled.set(key, formatter);
  }
  return formatter(time);
}
