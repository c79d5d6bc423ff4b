/**
 * `$moment` in JSONata: the part of moment 2.30 + moment-timezone 0.5 that flows use, without
 * the dependency. JSONata calls a function found on an object with that object as `this`, so
 * `$moment(payload).tz("Europe/London").format("HH:mm")` chains as it does in Node-RED.
 * Mutating methods change the moment and return it, as moment's do.
 */
import { daysInMonth, isLeapYear, wallTime, type CivilFields } from './civil.js';
import { formatZoned } from './date-format.js';
import { fromFields, offsetFromString, parseIso, parseWithFormat } from './moment-parse.js';
import { fixedZone, LOCAL_ZONE, timeZone, UTC_ZONE, zonedTime, type TimeZone } from './time-zone.js';

type Unit = 'year' | 'quarter' | 'month' | 'week' | 'isoWeek' | 'day' | 'date' | 'hour' | 'minute' | 'second'
  | 'millisecond' | 'weekday' | 'isoWeekday' | 'dayOfYear' | 'weekYear' | 'isoWeekYear';

// moment's unit aliases: the name, its plural and a shorthand; looked up as given, then lowercased.
const UNIT_SHORTHANDS: [Unit, string][] = [
  ['year', 'y'], ['quarter', 'Q'], ['month', 'M'], ['week', 'w'], ['isoWeek', 'W'], ['day', 'd'], ['date', 'D'],
  ['hour', 'h'], ['minute', 'm'], ['second', 's'], ['millisecond', 'ms'], ['weekday', 'e'], ['isoWeekday', 'E'],
  ['dayOfYear', 'DDD'], ['weekYear', 'gg'], ['isoWeekYear', 'GG'],
];
const UNITS = new Map<string, Unit>(UNIT_SHORTHANDS.flatMap(([unit, short]): [string, Unit][] =>
  [[unit.toLowerCase(), unit], [`${unit.toLowerCase()}s`, unit], [short, unit]]));

function normalizeUnit(unit: unknown): Unit | undefined {
  return typeof unit === 'string' ? UNITS.get(unit) ?? UNITS.get(unit.toLowerCase()) : undefined;
}

const MS_PER_UNIT: Partial<Record<Unit, number>> = { hour: 36e5, minute: 6e4, second: 1e3, millisecond: 1 };
/** moment's absRound: halves round away from zero. */
const absRound = (n: number) => (n < 0 ? -Math.round(-n) : Math.round(n));
const absFloor = (n: number) => (n < 0 ? Math.ceil(n) || 0 : Math.floor(n));
const mod = (n: number, d: number) => ((n % d) + d) % d;
const DEFAULT_FORMAT = 'YYYY-MM-DDTHH:mm:ssZ';
const DEFAULT_FORMAT_UTC = 'YYYY-MM-DDTHH:mm:ss[Z]';

class Moment {
  #time: number;
  #zone: TimeZone;
  /** Minutes east of UTC. For local time it follows the instant; moment-timezone may keep one its zone disagrees with. */
  #offset: number;

  constructor(time: number, zone: TimeZone = LOCAL_ZONE, offset = zone.offset(time)) {
    // JSONata 2.2 finds only own properties on objects, so `$moment().format()` needs the
    // methods on the instance; non-enumerable, they stay out of `$keys` and JSON.
    Object.defineProperties(this, METHODS);
    this.#time = time;
    this.#zone = zone;
    this.#offset = offset;
  }

  #fields(): CivilFields {
    return this.#zone.fields(this.#time, this.#offset);
  }

  /** Moves to an instant, taking the zone's offset there (moment's `updateOffset(m, false)`). */
  #setTime(time: number): this {
    // Date#setTime's TimeClip: fractions of a millisecond dropped, out of range invalid.
    this.#time = new Date(time).getTime();
    this.#offset = this.#zone.offset(time);
    return this;
  }

  /** Moves to a wall-clock reading, resolved in the zone as moment does (`updateOffset(m, true)`). */
  #setWall(wall: number): this {
    [this.#time, this.#offset] = this.#zone.resolve(wall, this.#offset);
    return this;
  }

  #setField(change: (f: CivilFields) => void): this {
    if (!this.isValid()) return this;
    const f = this.#fields();
    change(f);
    return this.#setWall(wallTime(f.year, f.month, f.date, f.hours, f.minutes, f.seconds, f.millis));
  }

  isValid(): boolean {
    return !Number.isNaN(this.#time);
  }

  valueOf(): number {
    return this.#time;
  }

  unix(): number {
    return Math.floor(this.#time / 1000);
  }

  clone(): Moment {
    return new Moment(this.#time, this.#zone, this.#offset);
  }

  toDate(): Date {
    return new Date(this.#time);
  }

  toISOString(): string | null {
    return this.isValid() ? new Date(this.#time).toISOString() : null;
  }

  toJSON(): string | null {
    return this.toISOString();
  }

  toString(): string {
    return this.format('ddd MMM DD YYYY HH:mm:ss [GMT]ZZ');
  }

  format(format?: string): string {
    if (!this.isValid()) return 'Invalid date';
    const utc = !this.#zone.local && this.#offset === 0;
    return formatZoned(zonedTime(this.#time, this.#zone, this.#offset), format || (utc ? DEFAULT_FORMAT_UTC : DEFAULT_FORMAT));
  }

  /** With a name, converts to that IANA zone (keeping the wall time if asked); without, the zone's name. */
  tz(name?: unknown, keepTime?: boolean): this | string | undefined {
    if (!name) return this.#zone.name;
    if (typeof name !== 'string') throw new Error(`Time zone name must be a string, got ${String(name)} [${typeof name}]`);
    const zone = timeZone(name);
    // moment-timezone logs an unknown zone and leaves the moment as it was.
    if (!zone) return this;
    this.#zone = zone;
    if (!keepTime) return this.#setTime(this.#time);
    // The zone's offset at the old instant, applied to the old wall time.
    const wall = this.#wall();
    this.#offset = zone.offset(this.#time);
    this.#time = new Date(wall - this.#offset * 6e4).getTime();
    return this;
  }

  #wall(): number {
    const f = this.#fields();
    return wallTime(f.year, f.month, f.date, f.hours, f.minutes, f.seconds, f.millis);
  }

  utc(): this {
    this.#zone = UTC_ZONE;
    return this.#setTime(this.#time);
  }

  local(): this {
    this.#zone = LOCAL_ZONE;
    return this.#setTime(this.#time);
  }

  /** Getter: minutes east of UTC. Setter: a fixed offset, in minutes (hours when under 16) or as "+05:30". */
  utcOffset(offset?: number | string): number | this {
    if (offset === undefined || offset === null) return this.isValid() ? this.#offset : NaN;
    const minutes = typeof offset === 'string' ? offsetFromString(offset)
      : Math.abs(offset) < 16 ? offset * 60 : offset;
    if (minutes === undefined || !this.isValid()) return this;
    this.#zone = fixedZone(minutes);
    return this.#setTime(this.#time);
  }

  add(amount: unknown, unit?: unknown): this {
    return this.#addSubtract(amount, unit, 1);
  }

  subtract(amount: unknown, unit?: unknown): this {
    return this.#addSubtract(amount, unit, -1);
  }

  /** moment's addSubtract for one unit: calendar units move the wall clock, clock units the instant. */
  #addSubtract(amount: unknown, unitName: unknown, sign: number): this {
    // A bare number is milliseconds; an unknown unit adds nothing.
    const unit = unitName === undefined ? 'millisecond' : normalizeUnit(unitName);
    const n = Number(amount);
    if (!this.isValid() || unit === undefined) return this;
    const months = unit === 'year' ? n * 12 : unit === 'quarter' ? n * 3 : unit === 'month' ? n : 0;
    const days = unit === 'week' || unit === 'isoWeek' ? n * 7 : unit === 'day' ? n : 0;
    const wholeMonths = absRound(months) * sign;
    const wholeDays = absRound(days) * sign;
    if (wholeMonths) this.#setMonth(this.#fields().month + wholeMonths);
    else if (wholeDays) this.#setField((f) => void (f.date += wholeDays));
    else this.#setTime(this.#time + (MS_PER_UNIT[unit] ?? 0) * n * sign);
    return this;
  }

  /** moment's setMonth: the day of the month is clamped to the new month's length. */
  #setMonth(month: number): this {
    return this.#setField((f) => {
      f.date = Math.min(f.date, daysInMonth(f.year, month));
      f.month = month;
    });
  }

  startOf(unit?: unknown): this {
    return this.#boundary(normalizeUnit(unit), false);
  }

  endOf(unit?: unknown): this {
    return this.#boundary(normalizeUnit(unit), true);
  }

  /** moment's startOf/endOf: the first (or last) millisecond of the unit holding this moment. */
  #boundary(unit: Unit | undefined, end: boolean): this {
    if (unit === undefined || unit === 'millisecond' || !this.isValid()) return this;
    const clock = { hour: 36e5, minute: 6e4, second: 1e3 }[unit as string];
    if (clock) {
      // Local time truncates the instant shifted by the offset; zoned moments truncate the wall clock.
      if (this.#zone.local) {
        const into = mod(this.#time + this.#offset * 6e4, clock);
        return this.#setTime(end ? this.#time - into + clock - 1 : this.#time - into);
      }
      const wall = this.#wall();
      const into = mod(wall, clock);
      return this.#setWall(end ? wall - into + clock - 1 : wall - into);
    }
    const f = this.#fields();
    let start: [number, number, number];
    let next: [number, number, number];
    switch (unit) {
      case 'year': start = [f.year, 0, 1]; next = [f.year + 1, 0, 1]; break;
      case 'quarter': start = [f.year, f.month - (f.month % 3), 1]; next = [f.year, f.month - (f.month % 3) + 3, 1]; break;
      case 'month': start = [f.year, f.month, 1]; next = [f.year, f.month + 1, 1]; break;
      case 'week': start = [f.year, f.month, f.date - f.day]; next = [f.year, f.month, f.date - f.day + 7]; break;
      case 'isoWeek': {
        const back = (f.day + 6) % 7;
        start = [f.year, f.month, f.date - back]; next = [f.year, f.month, f.date - back + 7]; break;
      }
      case 'day': case 'date': start = [f.year, f.month, f.date]; next = [f.year, f.month, f.date + 1]; break;
      // moment computes no time for the remaining units and ends up with an invalid date.
      default: return this.#setTime(NaN);
    }
    if (!end) return this.#setWall(wallTime(...start));
    if (this.#zone.local) return this.#setTime(LOCAL_ZONE.resolve(wallTime(...next), 0)[0] - 1);
    return this.#setWall(wallTime(...next) - 1);
  }

  diff(input?: unknown, unit?: unknown, asFloat?: unknown): number {
    if (!this.isValid()) return NaN;
    const other = toMoment(input);
    if (!other.isValid()) return NaN;
    // moment compares against the other instant seen in this moment's zone.
    const that = this.#zone.local ? other.clone().local() : this.clone().#setTime(other.#time);
    const zoneDelta = (that.#offset - this.#offset) * 6e4;
    const elapsed = this.#time - that.#time;
    let output: number;
    switch (normalizeUnit(unit)) {
      case 'year': output = monthDiff(this, that) / 12; break;
      case 'month': output = monthDiff(this, that); break;
      case 'quarter': output = monthDiff(this, that) / 3; break;
      case 'second': output = elapsed / 1e3; break;
      case 'minute': output = elapsed / 6e4; break;
      case 'hour': output = elapsed / 36e5; break;
      case 'day': output = (elapsed - zoneDelta) / 864e5; break;
      case 'week': output = (elapsed - zoneDelta) / 6048e5; break;
      default: output = elapsed;
    }
    return asFloat ? output : absFloor(output);
  }

  isBefore(input?: unknown, unit?: unknown): boolean {
    const other = toMoment(input);
    if (!this.isValid() || !other.isValid()) return false;
    const u = normalizeUnit(unit) ?? 'millisecond';
    return u === 'millisecond' ? this.#time < other.#time : this.clone().endOf(u).#time < other.#time;
  }

  isAfter(input?: unknown, unit?: unknown): boolean {
    const other = toMoment(input);
    if (!this.isValid() || !other.isValid()) return false;
    const u = normalizeUnit(unit) ?? 'millisecond';
    return u === 'millisecond' ? this.#time > other.#time : other.#time < this.clone().startOf(u).#time;
  }

  isSame(input?: unknown, unit?: unknown): boolean {
    const other = toMoment(input);
    if (!this.isValid() || !other.isValid()) return false;
    const u = normalizeUnit(unit) ?? 'millisecond';
    if (u === 'millisecond') return this.#time === other.#time;
    return this.clone().startOf(u).#time <= other.#time && other.#time <= this.clone().endOf(u).#time;
  }

  // Getters, and setters moving the wall clock as moment's do. Unlike moment they also reject
  // non-numeric strings rather than reading month names.
  year(value?: unknown): number | this {
    if (value == null) return this.#get('year');
    const year = Number(value);
    if (Number.isNaN(year)) return this;
    // 29 February becomes the 28th in a common year.
    return this.#setField((f) => {
      if (f.month === 1 && f.date === 29 && !isLeapYear(year)) f.date = 28;
      f.year = year;
    });
  }

  month(value?: unknown): number | this {
    if (value == null) return this.#get('month');
    const month = Number(value);
    return Number.isNaN(month) || !this.isValid() ? this : this.#setMonth(month);
  }

  date(value?: unknown): number | this {
    return this.#getSet('date', value);
  }

  day(value?: unknown): number | this {
    if (value == null) return this.#get('day');
    const day = Number(value);
    return Number.isNaN(day) || !this.isValid() ? this : this.add(day - this.#fields().day, 'd');
  }

  hour(value?: unknown): number | this {
    return this.#getSet('hours', value);
  }

  minute(value?: unknown): number | this {
    return this.#getSet('minutes', value);
  }

  second(value?: unknown): number | this {
    return this.#getSet('seconds', value);
  }

  millisecond(value?: unknown): number | this {
    return this.#getSet('millis', value);
  }

  #get(field: keyof CivilFields): number {
    return this.isValid() ? this.#fields()[field] : NaN;
  }

  #getSet(field: 'date' | 'hours' | 'minutes' | 'seconds' | 'millis', value: unknown): number | this {
    if (value == null) return this.#get(field);
    const n = Number(value);
    return Number.isNaN(n) ? this : this.#setField((f) => void (f[field] = n));
  }
}

const PLURALS = { hours: 'hour', minutes: 'minute', seconds: 'second', milliseconds: 'millisecond' } as const;
const METHODS: PropertyDescriptorMap = Object.fromEntries([
  ...Object.getOwnPropertyNames(Moment.prototype).filter((name) => name !== 'constructor')
    .map((name) => [name, Moment.prototype[name as keyof Moment]]),
  // moment's plural accessors.
  ...Object.entries(PLURALS).map(([plural, singular]) => [plural, Moment.prototype[singular]]),
].map(([name, value]) => [name, { value, writable: true, configurable: true }]));

/** moment's monthDiff: whole months between the two, plus the fraction of the month around the end. */
function monthDiff(a: Moment, b: Moment): number {
  if ((a.date() as number) < (b.date() as number)) return -monthDiff(b, a);
  const whole = ((b.year() as number) - (a.year() as number)) * 12 + ((b.month() as number) - (a.month() as number));
  const anchor = a.clone().add(whole, 'months').valueOf();
  let adjust: number;
  if (b.valueOf() - anchor < 0) {
    const before = a.clone().add(whole - 1, 'months').valueOf();
    adjust = (b.valueOf() - anchor) / (anchor - before);
  } else {
    const after = a.clone().add(whole + 1, 'months').valueOf();
    adjust = (b.valueOf() - anchor) / (after - anchor);
  }
  return -(whole + adjust) || 0;
}

function toMoment(input: unknown): Moment {
  return input instanceof Moment ? input : moment(input);
}

/** `$moment(input?, format?)`: now, a copy of a moment, or a local moment read from a number, Date, array or string. */
export function moment(input?: unknown, format?: unknown): Moment {
  if (input instanceof Moment) return input.clone();
  if (input === undefined) return new Moment(Date.now());
  if (input instanceof Date || typeof input === 'number') return new Moment(new Date(input as number).getTime());
  if (Array.isArray(input)) return new Moment(fromFields(input.slice(0, 7).map((v) => parseInt(String(v), 10))));
  if (typeof input === 'string') {
    if (typeof format === 'string' && format) return new Moment(parseWithFormat(input, format));
    return new Moment(parseIso(input) ?? new Date(input).getTime());
  }
  return new Moment(NaN);
}
