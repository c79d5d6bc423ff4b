import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { formatDate } from '../../../../src/runtime/util/moment/date-format.js';

// Every expected string below was produced by moment 2.30.1 (Node-RED's version) `format()` for
// the same local date, in the default English locale.

/** A local date in any year: `new Date(y, ...)` would read years 0–99 as 1900–1999. */
function localDate(year: number, month: number, day: number): Date {
  const d = new Date(2000, 0, 1);
  d.setFullYear(year, month, day);
  return d;
}

function assertFormats(date: Date, expected: Record<string, string>) {
  for (const [format, output] of Object.entries(expected)) {
    assert.equal(formatDate(date, format), output, `format ${JSON.stringify(format)}`);
  }
}

describe('formatDate: moment tokens', () => {
  const sunday = new Date(2024, 0, 7, 15, 4, 5, 123);

  it('formats every token of a Sunday afternoon', () => {
    assertFormats(sunday, {
      M: '1', Mo: '1st', MM: '01', MMM: 'Jan', MMMM: 'January',
      Q: '1', Qo: '1st',
      D: '7', Do: '7th', DD: '07', DDD: '7', DDDo: '7th', DDDD: '007',
      d: '0', do: '0th', dd: 'Su', ddd: 'Sun', dddd: 'Sunday', e: '0', E: '7',
      w: '2', wo: '2nd', ww: '02', W: '1', Wo: '1st', WW: '01',
      YY: '24', YYYY: '2024', YYYYYY: '+002024', Y: '2024',
      gg: '24', gggg: '2024', GG: '24', GGGG: '2024',
      A: 'PM', a: 'pm', H: '15', HH: '15', h: '3', hh: '03', k: '15', kk: '15',
      m: '4', mm: '04', s: '5', ss: '05',
      S: '1', SS: '12', SSS: '123', SSSS: '1230', SSSSS: '12300', SSSSSS: '123000',
      SSSSSSS: '1230000', SSSSSSSS: '12300000', SSSSSSSSS: '123000000',
      // Without moment-timezone, moment has no name for the local zone.
      z: '', zz: '',
    });
  });

  it('expands the English localized formats', () => {
    assertFormats(sunday, {
      LT: '3:04 PM', LTS: '3:04:05 PM',
      L: '01/07/2024', LL: 'January 7, 2024', LLL: 'January 7, 2024 3:04 PM', LLLL: 'Sunday, January 7, 2024 3:04 PM',
      l: '1/7/2024', ll: 'Jan 7, 2024', lll: 'Jan 7, 2024 3:04 PM', llll: 'Sun, Jan 7, 2024 3:04 PM',
      // Expansion happens before tokenising, so "M" + "MM/DD/YYYY" reads as "MMM/DD/YYYY".
      ML: 'Jan/07/2024',
    });
  });

  it('uses English ordinals', () => {
    const days = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31].map((d) => formatDate(new Date(2023, 0, d), 'Do'));
    assert.deepEqual(days, ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '31st']);
    assert.equal(formatDate(new Date(2023, 3, 21), 'DDD DDDo'), '111 111th');
    assert.equal(formatDate(new Date(2023, 3, 22), 'DDDo'), '112th');
    assert.equal(formatDate(new Date(2023, 3, 11), 'DDD DDDo'), '101 101st');
    assert.equal(formatDate(new Date(2023, 3, 12), 'DDDo'), '102nd');
  });

  it('formats midnight and noon on the 12-hour and 24-hour clocks', () => {
    const at = (hour: number) => formatDate(new Date(2024, 5, 1, hour, 7), 'h hh k kk A a H HH hmm Hmmss');
    assert.equal(at(0), '12 12 24 24 AM am 0 00 1207 00700');
    assert.equal(at(11), '11 11 11 11 AM am 11 11 1107 110700');
    assert.equal(at(12), '12 12 12 12 PM pm 12 12 1207 120700');
    assert.equal(at(23), '11 11 23 23 PM pm 23 23 1107 230700');
  });

  it('numbers locale (Sunday) weeks and ISO (Monday) weeks across year ends', () => {
    const weeks = (y: number, m: number, d: number) =>
      formatDate(new Date(y, m, d), 'd e E | w ww wo gg gggg | W WW Wo GG GGGG');
    assert.equal(weeks(2020, 11, 31), '4 4 4 | 1 01 1st 21 2021 | 53 53 53rd 20 2020');
    assert.equal(weeks(2021, 0, 1), '5 5 5 | 1 01 1st 21 2021 | 53 53 53rd 20 2020');
    assert.equal(weeks(2021, 0, 3), '0 0 7 | 2 02 2nd 21 2021 | 53 53 53rd 20 2020');
    assert.equal(weeks(2021, 0, 4), '1 1 1 | 2 02 2nd 21 2021 | 1 01 1st 21 2021');
    assert.equal(weeks(2019, 11, 29), '0 0 7 | 1 01 1st 20 2020 | 52 52 52nd 19 2019');
    assert.equal(weeks(2019, 11, 30), '1 1 1 | 1 01 1st 20 2020 | 1 01 1st 20 2020');
    assert.equal(weeks(2026, 11, 27), '0 0 7 | 1 01 1st 27 2027 | 52 52 52nd 26 2026');
    assert.equal(weeks(2027, 0, 1), '5 5 5 | 1 01 1st 27 2027 | 53 53 53rd 26 2026');
  });

  it('pads and signs years and names eras like moment', () => {
    const years = 'Y | YY | YYYY | YYYYY | YYYYYY | N NNNN NNNNN | y yo yy yyyy';
    assert.equal(formatDate(localDate(5, 5, 5), years), '0005 | 05 | 0005 | 00005 | +000005 | AD Anno Domini AD | 5 5th 05 0005');
    assert.equal(formatDate(localDate(0, 0, 1), years), '0000 | 00 | 0000 | 00000 | +000000 | BC Before Christ BC | 1 1st 01 0001');
    assert.equal(formatDate(localDate(-44, 2, 15), years), '-0044 | -44 | -0044 | -00044 | -000044 | BC Before Christ BC | 45 45th 45 0045');
    assert.equal(formatDate(localDate(12345, 6, 1), years), '+12345 | 45 | 12345 | 12345 | +012345 | AD Anno Domini AD | 12345 12345th 12345 12345');
  });

  it('truncates and scales fractional seconds', () => {
    assert.equal(formatDate(new Date(2024, 0, 7, 9, 4, 5, 7), 'S SS SSS SSSS SSSSSSSSS'), '0 00 007 0070 007000000');
  });
});

describe('formatDate: literals and escapes', () => {
  const sunday = new Date(2024, 0, 7, 15, 4, 5, 123);

  it('treats brackets, backslashes and unknown characters as moment does', () => {
    assertFormats(sunday, {
      '[Today is] dddd': 'Today is Sunday',
      // A backslash escapes a whole token: "\hmm" is one token, "\LT" survives expansion.
      '\\hmm \\LT [LT] LT': 'hmm LT LT 3:04 PM',
      // An unclosed "[" is literal; "w|" matches moment's token pattern but is no token.
      '[a[b] w| GGG ggg []': '[pmb w| 24G 24g ',
      'dddd, MMMM Do YYYY, h:mm:ss a': 'Sunday, January 7th 2024, 3:04:05 pm',
      'MMMMM DDDDD ddddd lllll': 'January1 0077 Sunday0 Sun, Jan 7, 2024 3:04 PM1/7/2024',
      'q f j': 'q f j',
      '\\': '',
    });
  });

  it('drops line breaks outside brackets, as moment does', () => {
    assert.equal(formatDate(sunday, 'YYYY\nMM\r\nDD [x\ny]'), '20240107 x\ny');
  });

  it('reports an invalid date as moment does', () => {
    assert.equal(formatDate(new Date(NaN), 'YYYY'), 'Invalid date');
  });

  it('formats many distinct formats, and repeats of one, consistently', () => {
    const formats = Array.from({ length: 300 }, (_, i) => `[${i}] YYYY`);
    for (const format of formats) formatDate(sunday, format);
    assert.equal(formatDate(sunday, formats[0]), '0 2024');
    assert.equal(formatDate(sunday, formats[299]), '299 2024');
    assert.equal(formatDate(new Date(2025, 1, 2), formats[299]), '299 2025');
  });
});

describe('formatDate: time zone tokens', () => {
  const originalTz = process.env.TZ;
  const restore = () => {
    if (originalTz === undefined) delete process.env.TZ;
    else process.env.TZ = originalTz;
  };
  // Node re-reads TZ whenever it is assigned, so each case can pin the local zone.
  const inZone = (tz: string, format: string, month: number) => {
    process.env.TZ = tz;
    return formatDate(new Date(2024, month, 7, 15, 4, 5, 123), format);
  };
  after(restore);

  it('prints the UTC offset, unix seconds and milliseconds in the local zone', () => {
    const format = 'Z ZZ X x [z]z[zz]zz';
    assert.equal(inZone('Asia/Kolkata', format, 0), '+05:30 +0530 1704620045 1704620045123 zzz');
    assert.equal(inZone('America/St_Johns', format, 0), '-03:30 -0330 1704652445 1704652445123 zzz');
    assert.equal(inZone('America/St_Johns', format, 6), '-02:30 -0230 1720373645 1720373645123 zzz');
    assert.equal(inZone('America/New_York', format, 6), '-04:00 -0400 1720379045 1720379045123 zzz');
  });

  it("uses moment's default format for an empty format", () => {
    assert.equal(inZone('Asia/Kolkata', '', 0), '2024-01-07T15:04:05+05:30');
    assert.equal(inZone('America/New_York', '', 0), '2024-01-07T15:04:05-05:00');
  });
});
