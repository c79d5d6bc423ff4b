/**
 * moment 2.x's format tokens in its default English locale, read from a zoned time (local, UTC,
 * a fixed offset or an IANA zone). Each entry mirrors moment's own getter, padding and ordinal
 * rules so output matches `moment(date).format()` character for character.
 */
import { daysFromCivil, isLeapYear } from './civil.js';
import type { ZonedTime } from './time-zone.js';

type Getter = (z: ZonedTime) => number;
export type TokenFormatter = (z: ZonedTime) => string;

const MONTHS = 'January_February_March_April_May_June_July_August_September_October_November_December'.split('_');
const MONTHS_SHORT = MONTHS.map((m) => m.slice(0, 3));
const WEEKDAYS = 'Sunday_Monday_Tuesday_Wednesday_Thursday_Friday_Saturday'.split('_');
const WEEKDAYS_SHORT = WEEKDAYS.map((d) => d.slice(0, 3));
const WEEKDAYS_MIN = WEEKDAYS.map((d) => d.slice(0, 2));

/** moment's zeroFill: the sign stays in front of the zeros. */
function zeroFill(n: number, width: number, forceSign = false): string {
  const sign = n >= 0 ? (forceSign ? '+' : '') : '-';
  return sign + String(Math.abs(n)).padStart(width, '0');
}

function ordinal(n: number): string {
  const last = n % 10;
  const suffix = Math.trunc((n % 100) / 10) === 1 ? 'th'
    : last === 1 ? 'st' : last === 2 ? 'nd' : last === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

const weekday = (year: number, month: number, day: number) => (((daysFromCivil(year, month, day) + 4) % 7) + 7) % 7;
const daysInYear = (y: number) => (isLeapYear(y) ? 366 : 365);

function dayOfYear(z: ZonedTime): number {
  return daysFromCivil(z.year, z.month, z.date) - daysFromCivil(z.year, 0, 1) + 1;
}

/** Days from 1 January to the start of week 1, the week (starting on weekday `dow`) holding January 7 + dow - doy. */
function firstWeekOffset(year: number, dow: number, doy: number): number {
  const firstWeekDay = 7 + dow - doy;
  const localWeekday = (7 + weekday(year, 0, firstWeekDay) - dow) % 7;
  return -localWeekday + firstWeekDay - 1;
}

function weeksInYear(year: number, dow: number, doy: number): number {
  return (daysInYear(year) - firstWeekOffset(year, dow, doy) + firstWeekOffset(year + 1, dow, doy)) / 7;
}

function weekOfYear(z: ZonedTime, dow: number, doy: number): { week: number; year: number } {
  const year = z.year;
  const week = Math.floor((dayOfYear(z) - firstWeekOffset(year, dow, doy) - 1) / 7) + 1;
  if (week < 1) return { week: week + weeksInYear(year - 1, dow, doy), year: year - 1 };
  const weeks = weeksInYear(year, dow, doy);
  if (week > weeks) return { week: week - weeks, year: year + 1 };
  return { week, year };
}

// English weeks start on Sunday and week 1 contains 1 January; ISO weeks start on Monday and
// week 1 contains 4 January.
const localeWeek = (z: ZonedTime) => weekOfYear(z, 0, 6);
const isoWeek = (z: ZonedTime) => weekOfYear(z, 1, 4);

/**
 * The English eras: Anno Domini from 0001-01-01, Before Christ counting back from 1. moment finds
 * the era from the start of the day, so a day that starts before the earliest representable
 * time belongs to no era.
 */
function eraOf(z: ZonedTime): 'AD' | 'BC' | undefined {
  const [midnight] = z.zone.resolve(daysFromCivil(z.year, z.month, z.date) * 864e5, z.offset);
  if (Number.isNaN(midnight)) return undefined;
  return z.year >= 1 ? 'AD' : 'BC';
}
const eraYear: Getter = (z) => (eraOf(z) === 'BC' ? 1 - z.year : z.year);
const ERA_NAMES = { AD: 'Anno Domini', BC: 'Before Christ' };
const eraAbbr: TokenFormatter = (z) => eraOf(z) ?? '';
const eraName: TokenFormatter = (z) => {
  const e = eraOf(z);
  return e ? ERA_NAMES[e] : '';
};

function utcOffset(z: ZonedTime, separator: string): string {
  let minutes = z.offset;
  let sign = '+';
  if (minutes < 0) {
    minutes = -minutes;
    sign = '-';
  }
  return sign + zeroFill(Math.trunc(minutes / 60), 2) + separator + zeroFill(Math.trunc(minutes % 60), 2);
}

const month: Getter = (z) => z.month + 1;
const quarter: Getter = (z) => Math.ceil((z.month + 1) / 3);
const date: Getter = (z) => z.date;
const day: Getter = (z) => z.day;
const hours: Getter = (z) => z.hours;
const hours12: Getter = (z) => z.hours % 12 || 12;
const hours24: Getter = (z) => z.hours || 24;
const minutes: Getter = (z) => z.minutes;
const seconds: Getter = (z) => z.seconds;
const millis: Getter = (z) => z.millis;
const year: Getter = (z) => z.year;
const week: Getter = (z) => localeWeek(z).week;
const weekYear: Getter = (z) => localeWeek(z).year;
const isoWeekNumber: Getter = (z) => isoWeek(z).week;
const isoWeekYear: Getter = (z) => isoWeek(z).year;

const plain = (get: Getter): TokenFormatter => (z) => String(get(z));
const padded = (get: Getter, width: number, forceSign = false): TokenFormatter => (z) => zeroFill(get(z), width, forceSign);
const ordinalOf = (get: Getter): TokenFormatter => (z) => ordinal(get(z));
const named = (names: string[], get: Getter): TokenFormatter => (z) => names[get(z)];
/** moment's longer `S` runs scale the milliseconds up to the run's length. */
const fraction = (width: number): TokenFormatter => (z) => zeroFill(z.millis * 10 ** (width - 3), width);

export const TOKENS: ReadonlyMap<string, TokenFormatter> = new Map<string, TokenFormatter>([
  ['M', plain(month)], ['MM', padded(month, 2)], ['Mo', ordinalOf(month)],
  ['MMM', named(MONTHS_SHORT, (z) => z.month)], ['MMMM', named(MONTHS, (z) => z.month)],
  ['Q', plain(quarter)], ['Qo', ordinalOf(quarter)],
  ['D', plain(date)], ['DD', padded(date, 2)], ['Do', ordinalOf(date)],
  ['DDD', plain(dayOfYear)], ['DDDD', padded(dayOfYear, 3)], ['DDDo', ordinalOf(dayOfYear)],
  ['d', plain(day)], ['do', ordinalOf(day)],
  ['dd', named(WEEKDAYS_MIN, day)], ['ddd', named(WEEKDAYS_SHORT, day)], ['dddd', named(WEEKDAYS, day)],
  ['e', plain(day)], ['E', (z) => String(z.day || 7)],
  ['w', plain(week)], ['ww', padded(week, 2)], ['wo', ordinalOf(week)],
  ['W', plain(isoWeekNumber)], ['WW', padded(isoWeekNumber, 2)], ['Wo', ordinalOf(isoWeekNumber)],
  ['Y', (z) => (z.year <= 9999 ? zeroFill(z.year, 4) : `+${z.year}`)],
  ['YY', padded((z) => z.year % 100, 2)], ['YYYY', padded(year, 4)],
  ['YYYYY', padded(year, 5)], ['YYYYYY', padded(year, 6, true)],
  // English eras have the same abbreviation and narrow form.
  ['N', eraAbbr], ['NN', eraAbbr], ['NNN', eraAbbr], ['NNNN', eraName], ['NNNNN', eraAbbr],
  ['y', plain(eraYear)], ['yo', ordinalOf(eraYear)],
  ['yy', padded(eraYear, 2)], ['yyy', padded(eraYear, 3)], ['yyyy', padded(eraYear, 4)],
  ['gg', padded((z) => weekYear(z) % 100, 2)], ['gggg', padded(weekYear, 4)], ['ggggg', padded(weekYear, 5)],
  ['GG', padded((z) => isoWeekYear(z) % 100, 2)], ['GGGG', padded(isoWeekYear, 4)], ['GGGGG', padded(isoWeekYear, 5)],
  ['A', (z) => (z.hours > 11 ? 'PM' : 'AM')], ['a', (z) => (z.hours > 11 ? 'pm' : 'am')],
  ['H', plain(hours)], ['HH', padded(hours, 2)],
  ['h', plain(hours12)], ['hh', padded(hours12, 2)],
  ['k', plain(hours24)], ['kk', padded(hours24, 2)],
  ['hmm', (z) => `${hours12(z)}${zeroFill(z.minutes, 2)}`],
  ['hmmss', (z) => `${hours12(z)}${zeroFill(z.minutes, 2)}${zeroFill(z.seconds, 2)}`],
  ['Hmm', (z) => `${z.hours}${zeroFill(z.minutes, 2)}`],
  ['Hmmss', (z) => `${z.hours}${zeroFill(z.minutes, 2)}${zeroFill(z.seconds, 2)}`],
  ['m', plain(minutes)], ['mm', padded(minutes, 2)],
  ['s', plain(seconds)], ['ss', padded(seconds, 2)],
  ['S', plain((z) => Math.trunc(z.millis / 100))],
  ['SS', padded((z) => Math.trunc(z.millis / 10), 2)],
  ['SSS', padded(millis, 3)],
  ...[4, 5, 6, 7, 8, 9].map((n): [string, TokenFormatter] => ['S'.repeat(n), fraction(n)]),
  ['z', (z) => z.zone.abbr(z.time)], ['zz', (z) => z.zone.longName(z.time)],
  ['Z', (z) => utcOffset(z, ':')], ['ZZ', (z) => utcOffset(z, '')],
  ['X', (z) => String(Math.floor(z.time / 1000))], ['x', (z) => String(z.time)],
]);

/** English long date formats; the lowercase forms drop the zero padding and long names. */
export const LONG_FORMATS: ReadonlyMap<string, string> = new Map([
  ['LTS', 'h:mm:ss A'], ['LT', 'h:mm A'],
  ['L', 'MM/DD/YYYY'], ['LL', 'MMMM D, YYYY'], ['LLL', 'MMMM D, YYYY h:mm A'], ['LLLL', 'dddd, MMMM D, YYYY h:mm A'],
  ['l', 'M/D/YYYY'], ['ll', 'MMM D, YYYY'], ['lll', 'MMM D, YYYY h:mm A'], ['llll', 'ddd, MMM D, YYYY h:mm A'],
]);
