/**
 * The three kinds of clock a moment can read: the host's local time, a fixed UTC offset and an
 * IANA zone (read through `Intl.DateTimeFormat`, as moment-timezone 0.5 reads its bundled data).
 */
import { civilFields, type CivilFields } from './civil.js';

export interface TimeZone {
  /** moment's zone-less local mode: fields follow `Date`'s local getters and moment-timezone leaves it alone. */
  readonly local: boolean;
  /** What `tz()` returns: the IANA name, or undefined for local time and fixed offsets. */
  readonly name: string | undefined;
  /** Minutes east of UTC at an instant. */
  offset(time: number): number;
  fields(time: number, offset: number): CivilFields;
  /**
   * The instant and offset after a wall-clock change (a wall reading as from `wallTime`) made
   * while the moment had offset `previous`, as moment-timezone 0.5's `updateOffset(m, true)` does.
   */
  resolve(wall: number, previous: number): [time: number, offset: number];
  /** The `z` and `zz` tokens. */
  abbr(time: number): string;
  longName(time: number): string;
}

/** A moment's reading, the input of the format tokens. */
export interface ZonedTime extends CivilFields {
  time: number;
  /** Minutes east of UTC as the moment holds it; moment-timezone may keep one its zone disagrees with inside a gap. */
  offset: number;
  zone: TimeZone;
}

/** Date's TimeClip: an instant outside ±8.64e15 ms is no time at all. */
const clip = (time: number) => (Math.abs(time) <= 8.64e15 ? time : NaN);

export const LOCAL_ZONE: TimeZone = {
  local: true,
  name: undefined,
  // moment rounds, so a historical offset with seconds prints as whole minutes.
  offset: (time) => -Math.round(new Date(time).getTimezoneOffset()),
  fields(time) {
    const d = new Date(time);
    return {
      year: d.getFullYear(), month: d.getMonth(), date: d.getDate(), day: d.getDay(),
      hours: d.getHours(), minutes: d.getMinutes(), seconds: d.getSeconds(), millis: d.getMilliseconds(),
    };
  },
  resolve(wall) {
    // Date's own gap and overlap rules are what moment's local setters get.
    const f = civilFields(wall);
    const d = new Date(2000, 0, 1);
    d.setFullYear(f.year, f.month, f.date);
    d.setHours(f.hours, f.minutes, f.seconds, f.millis);
    const time = d.getTime();
    return [time, LOCAL_ZONE.offset(time)];
  },
  // Without a default zone moment-timezone has no name for local time.
  abbr: () => '',
  longName: () => '',
};

/** A fixed offset, which is how moment holds `utc()` and `utcOffset(n)`; moment names any of them UTC. */
export function fixedZone(offset: number): TimeZone {
  return {
    local: false,
    name: undefined,
    offset: () => offset,
    fields: (time) => civilFields(time + offset * 6e4),
    resolve: (wall) => [clip(wall - offset * 6e4), offset],
    abbr: () => 'UTC',
    longName: () => 'Coordinated Universal Time',
  };
}

export const UTC_ZONE = fixedZone(0);

export function zonedTime(time: number, zone: TimeZone, offset = zone.offset(time)): ZonedTime {
  return { ...zone.fields(time, offset), time, offset, zone };
}

// Which English-speaking regions' CLDR data carry the tzdb abbreviations of a zone area, in
// the order tried. Chosen by comparing every zone against moment-timezone 0.5.48: these
// disagree only for Adak (HAST), Miquelon (PMST), Windhoek (WAST), Eucla and Lord Howe; zones
// no locale names (Kolkata, Shanghai, Seoul...) get tzdb's numeric form, as most of tzdb does.
const ABBR_LOCALES: Record<string, string[]> = {
  Africa: ['en-ZA', 'en-US'], America: ['en-US', 'en-CA'], Antarctica: [], Arctic: ['en-GB'],
  Asia: ['en-150', 'en-HK', 'ja-JP'], Atlantic: ['en-GB'], Australia: ['en-AU'], Europe: ['en-GB'],
  Indian: ['en-ZA'], Pacific: ['en-US'],
};
const ALPHABETIC = /^[A-Z]{2,5}$/;
const LONG_OFFSET = /GMT(?:([+-])(\d\d):(\d\d)(?::(\d\d))?)?$/;

const part = (format: Intl.DateTimeFormat, time: number) =>
  format.formatToParts(time).find((p) => p.type === 'timeZoneName')?.value ?? '';

/** tzdb's numeric abbreviation: "+03", "+0530", "-0330". */
function numericAbbr(offset: number): string {
  const abs = Math.abs(offset);
  const minutes = abs % 60;
  return (offset < 0 ? '-' : '+') + String(Math.trunc(abs / 60)).padStart(2, '0') + (minutes ? String(minutes).padStart(2, '0') : '');
}

function namedZone(name: string, formatter: Intl.DateTimeFormat): TimeZone {
  let abbrFormats: Intl.DateTimeFormat[] | undefined;
  const zone: TimeZone = {
    local: false,
    name,
    offset(time) {
      if (Number.isNaN(time)) return NaN;
      const m = LONG_OFFSET.exec(part(formatter, time));
      if (!m?.[1]) return 0;
      const minutes = Number(m[2]) * 60 + Number(m[3]) + Number(m[4] ?? 0) / 60;
      return m[1] === '-' ? -minutes : minutes;
    },
    fields: (time, offset) => civilFields(time + offset * 6e4),
    resolve(wall, previous) {
      // moment-timezone checks the old offset at the new wall time; if the zone disagrees it
      // takes the zone's offset and keeps the wall time without checking again.
      const guess = clip(wall - previous * 6e4);
      const offset = zone.offset(guess);
      return offset === previous ? [guess, offset] : [clip(wall - offset * 6e4), offset];
    },
    abbr(time) {
      const offset = zone.offset(time);
      // Only pre-standard-time offsets have seconds; tzdb names most of them LMT (Paris's PMT is one exception).
      if (!Number.isInteger(offset)) return 'LMT';
      abbrFormats ??= (ABBR_LOCALES[name.split('/')[0]] ?? ['en-US'])
        .map((locale) => new Intl.DateTimeFormat(locale, { timeZone: name, timeZoneName: 'short' }));
      for (const format of abbrFormats) {
        const abbr = part(format, time);
        if (ALPHABETIC.test(abbr)) return abbr;
      }
      return numericAbbr(offset);
    },
    // moment-timezone gives the abbreviation for both tokens.
    longName: (time) => zone.abbr(time),
  };
  return zone;
}

// Only names Intl accepts are kept, so the cache is bounded by the zone database.
const zones = new Map<string, TimeZone>();
let canonicalNames: Map<string, string> | undefined;

/** An IANA zone by name, case-insensitively as moment-timezone looks it up; undefined for an unknown name. */
export function timeZone(name: string): TimeZone | undefined {
  const key = name.toLowerCase();
  let zone = zones.get(key);
  if (zone) return zone;
  let formatter: Intl.DateTimeFormat;
  try {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone: name, timeZoneName: 'longOffset' });
  } catch {
    return undefined;
  }
  canonicalNames ??= new Map(Intl.supportedValuesOf('timeZone').map((n) => [n.toLowerCase(), n]));
  zone = namedZone(canonicalNames.get(key) ?? name, formatter);
  zones.set(key, zone);
  return zone;
}
