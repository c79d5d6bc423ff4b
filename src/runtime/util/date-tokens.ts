/**
 * moment 2.x's format tokens in its default English locale, evaluated in local time. Each entry
 * mirrors moment's own getter, padding and ordinal rules so output matches `moment(date).format()`
 * character for character.
 */

type Getter = (d: Date) => number;
export type TokenFormatter = (d: Date) => string;

const MONTHS = 'January_February_March_April_May_June_July_August_September_October_November_December'.split('_');
const MONTHS_SHORT = MONTHS.map((m) => m.slice(0, 3));
const WEEKDAYS = 'Sunday_Monday_Tuesday_Wednesday_Thursday_Friday_Saturday'.split('_');
const WEEKDAYS_SHORT = WEEKDAYS.map((d) => d.slice(0, 3));
const WEEKDAYS_MIN = WEEKDAYS.map((d) => d.slice(0, 2));
const DAY_MS = 864e5;

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

/** Midnight of a local calendar day; setFullYear avoids Date's 0–99 → 1900s remapping. */
function localMidnight(year: number, month: number, day: number): number {
  const d = new Date(2000, 0, 1);
  d.setFullYear(year, month, day);
  return d.getTime();
}

function utcWeekday(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  return d.getUTCDay();
}

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInYear = (y: number) => (isLeapYear(y) ? 366 : 365);

/** Rounded like moment, so a DST shift between the two midnights does not change the count. */
function dayOfYear(d: Date): number {
  const y = d.getFullYear();
  return Math.round((localMidnight(y, d.getMonth(), d.getDate()) - localMidnight(y, 0, 1)) / DAY_MS) + 1;
}

/** Days from 1 January to the start of week 1, the week (starting on weekday `dow`) holding January 7 + dow - doy. */
function firstWeekOffset(year: number, dow: number, doy: number): number {
  const firstWeekDay = 7 + dow - doy;
  const localWeekday = (7 + utcWeekday(year, 0, firstWeekDay) - dow) % 7;
  return -localWeekday + firstWeekDay - 1;
}

function weeksInYear(year: number, dow: number, doy: number): number {
  return (daysInYear(year) - firstWeekOffset(year, dow, doy) + firstWeekOffset(year + 1, dow, doy)) / 7;
}

function weekOfYear(d: Date, dow: number, doy: number): { week: number; year: number } {
  const year = d.getFullYear();
  const week = Math.floor((dayOfYear(d) - firstWeekOffset(year, dow, doy) - 1) / 7) + 1;
  if (week < 1) return { week: week + weeksInYear(year - 1, dow, doy), year: year - 1 };
  const weeks = weeksInYear(year, dow, doy);
  if (week > weeks) return { week: week - weeks, year: year + 1 };
  return { week, year };
}

// English weeks start on Sunday and week 1 contains 1 January; ISO weeks start on Monday and
// week 1 contains 4 January.
const localeWeek = (d: Date) => weekOfYear(d, 0, 6);
const isoWeek = (d: Date) => weekOfYear(d, 1, 4);

/**
 * The English eras: Anno Domini from local 0001-01-01, Before Christ counting back from 1. moment
 * finds the era from the day's local midnight, so a day whose midnight lies before the earliest
 * representable time belongs to no era.
 */
function eraOf(d: Date): 'AD' | 'BC' | undefined {
  if (Number.isNaN(localMidnight(d.getFullYear(), d.getMonth(), d.getDate()))) return undefined;
  return d.getFullYear() >= 1 ? 'AD' : 'BC';
}
const eraYear: Getter = (d) => (eraOf(d) === 'BC' ? 1 - d.getFullYear() : d.getFullYear());
const ERA_NAMES = { AD: 'Anno Domini', BC: 'Before Christ' };
const eraAbbr: TokenFormatter = (d) => eraOf(d) ?? '';
const eraName: TokenFormatter = (d) => {
  const e = eraOf(d);
  return e ? ERA_NAMES[e] : '';
};

function utcOffset(d: Date, separator: string): string {
  let minutes = -Math.round(d.getTimezoneOffset());
  let sign = '+';
  if (minutes < 0) {
    minutes = -minutes;
    sign = '-';
  }
  return sign + zeroFill(Math.trunc(minutes / 60), 2) + separator + zeroFill(minutes % 60, 2);
}

const month: Getter = (d) => d.getMonth() + 1;
const quarter: Getter = (d) => Math.ceil((d.getMonth() + 1) / 3);
const date: Getter = (d) => d.getDate();
const day: Getter = (d) => d.getDay();
const hours: Getter = (d) => d.getHours();
const hours12: Getter = (d) => d.getHours() % 12 || 12;
const hours24: Getter = (d) => d.getHours() || 24;
const minutes: Getter = (d) => d.getMinutes();
const seconds: Getter = (d) => d.getSeconds();
const millis: Getter = (d) => d.getMilliseconds();
const year: Getter = (d) => d.getFullYear();
const week: Getter = (d) => localeWeek(d).week;
const weekYear: Getter = (d) => localeWeek(d).year;
const isoWeekNumber: Getter = (d) => isoWeek(d).week;
const isoWeekYear: Getter = (d) => isoWeek(d).year;

const plain = (get: Getter): TokenFormatter => (d) => String(get(d));
const padded = (get: Getter, width: number, forceSign = false): TokenFormatter => (d) => zeroFill(get(d), width, forceSign);
const ordinalOf = (get: Getter): TokenFormatter => (d) => ordinal(get(d));
const named = (names: string[], get: Getter): TokenFormatter => (d) => names[get(d)];
/** moment's longer `S` runs scale the milliseconds up to the run's length. */
const fraction = (width: number): TokenFormatter => (d) => zeroFill(d.getMilliseconds() * 10 ** (width - 3), width);

export const TOKENS: ReadonlyMap<string, TokenFormatter> = new Map<string, TokenFormatter>([
  ['M', plain(month)], ['MM', padded(month, 2)], ['Mo', ordinalOf(month)],
  ['MMM', named(MONTHS_SHORT, (d) => d.getMonth())], ['MMMM', named(MONTHS, (d) => d.getMonth())],
  ['Q', plain(quarter)], ['Qo', ordinalOf(quarter)],
  ['D', plain(date)], ['DD', padded(date, 2)], ['Do', ordinalOf(date)],
  ['DDD', plain(dayOfYear)], ['DDDD', padded(dayOfYear, 3)], ['DDDo', ordinalOf(dayOfYear)],
  ['d', plain(day)], ['do', ordinalOf(day)],
  ['dd', named(WEEKDAYS_MIN, day)], ['ddd', named(WEEKDAYS_SHORT, day)], ['dddd', named(WEEKDAYS, day)],
  ['e', plain(day)], ['E', (d) => String(d.getDay() || 7)],
  ['w', plain(week)], ['ww', padded(week, 2)], ['wo', ordinalOf(week)],
  ['W', plain(isoWeekNumber)], ['WW', padded(isoWeekNumber, 2)], ['Wo', ordinalOf(isoWeekNumber)],
  ['Y', (d) => (d.getFullYear() <= 9999 ? zeroFill(d.getFullYear(), 4) : `+${d.getFullYear()}`)],
  ['YY', padded((d) => d.getFullYear() % 100, 2)], ['YYYY', padded(year, 4)],
  ['YYYYY', padded(year, 5)], ['YYYYYY', padded(year, 6, true)],
  // English eras have the same abbreviation and narrow form.
  ['N', eraAbbr], ['NN', eraAbbr], ['NNN', eraAbbr], ['NNNN', eraName], ['NNNNN', eraAbbr],
  ['y', plain(eraYear)], ['yo', ordinalOf(eraYear)],
  ['yy', padded(eraYear, 2)], ['yyy', padded(eraYear, 3)], ['yyyy', padded(eraYear, 4)],
  ['gg', padded((d) => weekYear(d) % 100, 2)], ['gggg', padded(weekYear, 4)], ['ggggg', padded(weekYear, 5)],
  ['GG', padded((d) => isoWeekYear(d) % 100, 2)], ['GGGG', padded(isoWeekYear, 4)], ['GGGGG', padded(isoWeekYear, 5)],
  ['A', (d) => (d.getHours() > 11 ? 'PM' : 'AM')], ['a', (d) => (d.getHours() > 11 ? 'pm' : 'am')],
  ['H', plain(hours)], ['HH', padded(hours, 2)],
  ['h', plain(hours12)], ['hh', padded(hours12, 2)],
  ['k', plain(hours24)], ['kk', padded(hours24, 2)],
  ['hmm', (d) => `${hours12(d)}${zeroFill(d.getMinutes(), 2)}`],
  ['hmmss', (d) => `${hours12(d)}${zeroFill(d.getMinutes(), 2)}${zeroFill(d.getSeconds(), 2)}`],
  ['Hmm', (d) => `${d.getHours()}${zeroFill(d.getMinutes(), 2)}`],
  ['Hmmss', (d) => `${d.getHours()}${zeroFill(d.getMinutes(), 2)}${zeroFill(d.getSeconds(), 2)}`],
  ['m', plain(minutes)], ['mm', padded(minutes, 2)],
  ['s', plain(seconds)], ['ss', padded(seconds, 2)],
  ['S', plain((d) => Math.trunc(d.getMilliseconds() / 100))],
  ['SS', padded((d) => Math.trunc(d.getMilliseconds() / 10), 2)],
  ['SSS', padded(millis, 3)],
  ...[4, 5, 6, 7, 8, 9].map((n): [string, TokenFormatter] => ['S'.repeat(n), fraction(n)]),
  // Without moment-timezone a local moment has no zone name: moment prints nothing.
  ['z', () => ''], ['zz', () => ''],
  ['Z', (d) => utcOffset(d, ':')], ['ZZ', (d) => utcOffset(d, '')],
  ['X', (d) => String(Math.floor(d.getTime() / 1000))], ['x', (d) => String(d.getTime())],
]);

/** English long date formats; the lowercase forms drop the zero padding and long names. */
export const LONG_FORMATS: ReadonlyMap<string, string> = new Map([
  ['LTS', 'h:mm:ss A'], ['LT', 'h:mm A'],
  ['L', 'MM/DD/YYYY'], ['LL', 'MMMM D, YYYY'], ['LLL', 'MMMM D, YYYY h:mm A'], ['LLLL', 'dddd, MMMM D, YYYY h:mm A'],
  ['l', 'M/D/YYYY'], ['ll', 'MMM D, YYYY'], ['lll', 'MMM D, YYYY h:mm A'], ['llll', 'ddd, MMM D, YYYY h:mm A'],
]);
