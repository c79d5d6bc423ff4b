/**
 * Proleptic Gregorian calendar arithmetic on plain numbers. A wall-clock reading in any zone is
 * encoded as "milliseconds since 1970-01-01 00:00 on that clock", so fields can be read and
 * rebuilt without going through `Date`, whose local getters know only the host's zone and whose
 * range ends where an offset could push a wall reading past it.
 */

export const DAY_MS = 864e5;

/** A wall-clock reading split into fields; `month` counts from 0 and `day` is 0 for Sunday, as in `Date`. */
export interface CivilFields {
  year: number;
  month: number;
  date: number;
  day: number;
  hours: number;
  minutes: number;
  seconds: number;
  millis: number;
}

const mod = (n: number, d: number) => ((n % d) + d) % d;

/** Days from 1970-01-01 to the given day; months and days outside their ranges roll over as in `Date.UTC`. */
export function daysFromCivil(year: number, month: number, date: number): number {
  // Howard Hinnant's days_from_civil, with years starting in March so leap days fall at the end.
  let y = year + Math.floor(month / 12);
  const m = mod(month, 12) + 1;
  if (m <= 2) y -= 1;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5);
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468 + date - 1;
}

export function wallTime(year: number, month: number, date: number, hours = 0, minutes = 0, seconds = 0, millis = 0): number {
  return daysFromCivil(year, month, date) * DAY_MS + ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis;
}

export function civilFields(wall: number): CivilFields {
  const days = Math.floor(wall / DAY_MS);
  let rest = wall - days * DAY_MS;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const month = mp < 10 ? mp + 2 : mp - 10;
  const hours = Math.floor(rest / 36e5);
  rest -= hours * 36e5;
  const minutes = Math.floor(rest / 6e4);
  rest -= minutes * 6e4;
  const seconds = Math.floor(rest / 1000);
  return {
    year: yearOfEra + era * 400 + (month <= 1 ? 1 : 0),
    month,
    date: dayOfYear - Math.floor((153 * mp + 2) / 5) + 1,
    day: mod(days + 4, 7),
    hours,
    minutes,
    seconds,
    millis: rest - seconds * 1000,
  };
}

export const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** moment's daysInMonth: a month outside 0–11 counts into the neighbouring years. */
export function daysInMonth(year: number, month: number): number {
  const m = mod(month, 12);
  const y = year + (month - m) / 12;
  return m === 1 ? (isLeapYear(y) ? 29 : 28) : 31 - ((m % 7) % 2);
}
