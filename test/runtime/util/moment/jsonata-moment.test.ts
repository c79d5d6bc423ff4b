import { describe, it, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateJSONataExpression, prepareJSONataExpression } from '../../../../src/runtime/util/index.js';
import { flowSuite, node, type Conf } from '../../../nodes/flow.js';

// Every expected value below is what Node-RED gives for the same expression: real moment 2.30.1
// with moment-timezone 0.5.48 bound as `$moment`.

function evaluate(expression: string, msg: unknown = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    evaluateJSONataExpression(prepareJSONataExpression(expression, null), msg, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function assertEvaluates(expected: Record<string, unknown>) {
  for (const [expression, value] of Object.entries(expected)) {
    assert.deepEqual(await evaluate(expression), value, expression);
  }
}

// Local-time results depend on the host zone, so those cases pin it; Node re-reads TZ on assignment.
const originalTz = process.env.TZ;
after(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

describe('$moment: zones and formatting', () => {
  it('formats in an IANA zone with its offset and abbreviation', async () => {
    await assertEvaluates({
      '$moment(1704639845123).tz("Europe/London").format("YYYY-MM-DD HH:mm:ss.SSS Z z")': '2024-01-07 15:04:05.123 +00:00 GMT',
      '$moment(1720364645123).tz("Europe/London").format("dddd, MMMM Do YYYY, h:mm:ss a Z z")': 'Sunday, July 7th 2024, 4:04:05 pm +01:00 BST',
      '$moment(1704639845123).tz("Asia/Tokyo").format("YYYY-MM-DD HH:mm Z z")': '2024-01-08 00:04 +09:00 JST',
      '$moment(1704639845123).tz("America/St_Johns").format()': '2024-01-07T11:34:05-03:30',
      '$moment(1704639845123).tz("Asia/Dubai").format("HH:mm ZZ z")': '19:04 +0400 +04',
      '$moment("2024-03-15T10:20:30.456Z").tz("asia/tokyo").tz()': 'Asia/Tokyo',
    });
  });

  it("uses moment's default formats: a trailing Z only at offset zero outside local time", async () => {
    await assertEvaluates({
      '$moment(1704639845123).tz("Europe/London").format()': '2024-01-07T15:04:05Z',
      '$moment(1720364645123).tz("Europe/London").format()': '2024-07-07T16:04:05+01:00',
      '$moment(1704639845123).utc().format()': '2024-01-07T15:04:05Z',
      '$moment(1704639845123).utcOffset("+05:30").format("YYYY-MM-DD HH:mm Z z")': '2024-01-07 20:34 +05:30 UTC',
    });
  });

  it('formats local time, also after leaving a zone', async () => {
    process.env.TZ = 'America/New_York';
    await assertEvaluates({
      '$moment(1704639845123).format()': '2024-01-07T10:04:05-05:00',
      '$moment(1704639845123).tz("Asia/Tokyo").local().format("YYYY-MM-DD HH:mm z")': '2024-01-07 10:04 ',
      '$moment(1704639845123).utcOffset()': -300,
      '$moment(1704639845123).tz("Asia/Kolkata").utcOffset()': 330,
    });
  });
});

describe('$moment: arithmetic across DST in America/New_York', () => {
  it('moves calendar units on the wall clock and clock units on the instant', async () => {
    await assertEvaluates({
      '$moment("2024-03-09T12:00:00-05:00").tz("America/New_York").add(1, "day").format()': '2024-03-10T12:00:00-04:00',
      '$moment("2024-03-09T12:00:00-05:00").tz("America/New_York").add(24, "hours").format()': '2024-03-10T13:00:00-04:00',
      '$moment(1710054000000).tz("America/New_York").subtract(1, "hour").format()': '2024-03-10T01:00:00-05:00',
      // Into the spring gap moment-timezone keeps the wall time and takes the new offset.
      '$moment("2024-03-09T02:30:00-05:00").tz("America/New_York").add(1, "day").format()': '2024-03-10T02:30:00-04:00',
      // An autumn overlap keeps the offset the moment came from.
      '$moment("2024-11-02T01:30:00-04:00").tz("America/New_York").add(1, "day").format()': '2024-11-03T01:30:00-04:00',
      '$moment("2024-11-04T01:30:00-05:00").tz("America/New_York").subtract(1, "day").format()': '2024-11-03T01:30:00-05:00',
    });
  });

  it('finds day boundaries and differences in the zone', async () => {
    await assertEvaluates({
      '$moment("2024-03-10T12:00:00-04:00").tz("America/New_York").startOf("day").format()': '2024-03-10T00:00:00-05:00',
      '$moment("2024-03-10T12:00:00-04:00").tz("America/New_York").endOf("day").format("YYYY-MM-DD HH:mm:ss.SSS Z")': '2024-03-10 23:59:59.999 -04:00',
      '$moment("2024-03-10T12:00:00-04:00").tz("America/New_York").diff($moment("2024-03-09T12:00:00-05:00"), "hours")': 23,
      '$moment("2024-03-10T12:00:00-04:00").tz("America/New_York").diff($moment("2024-03-09T12:00:00-05:00"), "days", true)': 1,
    });
  });
});

describe('$moment: calendar arithmetic', () => {
  it('clamps to the end of shorter months and normalizes unit aliases', async () => {
    await assertEvaluates({
      '$moment("2024-01-31T12:00:00Z").utc().add(1, "month").format()': '2024-02-29T12:00:00Z',
      '$moment("2024-03-31T12:00:00Z").utc().subtract(1, "M").format()': '2024-02-29T12:00:00Z',
      '$moment("2023-01-31T12:00:00Z").utc().add(1, "months").format()': '2023-02-28T12:00:00Z',
      '$moment("2024-02-29T12:00:00Z").utc().add(1, "y").format()': '2025-02-28T12:00:00Z',
      '$moment("2024-02-29T12:00:00Z").utc().add(1, "Q").add(2, "w").add(3, "h").add(4, "m").add(5, "s").add(6, "ms").toISOString()':
        '2024-06-12T15:04:05.006Z',
      // "D" means the day of the month, which is no duration: moment adds nothing.
      '$moment(1704639845123).add(1, "D").valueOf()': 1704639845123,
      // Fractional days round to whole days.
      '$moment(1704639845123).add(1.5, "days").valueOf() - 1704639845123': 172800000,
    });
  });

  it('measures differences in months, days and weeks', async () => {
    await assertEvaluates({
      '$moment("2024-03-15T00:00:00Z").diff($moment("2024-01-31T00:00:00Z"), "months")': 1,
      '$moment("2024-03-15T00:00:00Z").diff($moment("2024-01-31T00:00:00Z"), "months", true)': 1.467315716272601,
      '$moment("2024-03-15T00:00:00Z").diff($moment("2024-01-31T00:00:00Z"), "days")': 44,
      '$moment("2024-01-31T00:00:00Z").diff($moment("2024-03-15T00:00:00Z"), "weeks", true)': -6.291666666666667,
    });
  });

  it('finds unit boundaries, reads fields and compares', async () => {
    await assertEvaluates({
      '$moment("2024-03-15T00:00:00Z").utc().startOf("isoWeek").format()': '2024-03-11T00:00:00Z',
      '$moment("2024-03-15T00:00:00Z").utc().startOf("week").format()': '2024-03-10T00:00:00Z',
      '$moment("2024-03-15T00:00:00Z").utc().endOf("quarter").toISOString()': '2024-03-31T23:59:59.999Z',
      '$moment("2024-03-15T10:20:30.456Z").utc().startOf("hour").toISOString()': '2024-03-15T10:00:00.000Z',
      '$moment("2024-03-15T10:20:30.456Z").utc().endOf("minute").toISOString()': '2024-03-15T10:20:59.999Z',
      '($m := $moment("2024-03-15T10:20:30.456Z").utc(); $join([$m.year(), $m.month(), $m.date(), $m.day(), $m.hour(), $m.minute(), $m.second(), $m.millisecond()].$string(), " "))':
        '2024 2 15 5 10 20 30 456',
      '$moment("2024-03-15T10:20:30.456Z").tz("Asia/Tokyo").isSame($moment("2024-03-15T16:00:00Z"), "day")': false,
      '$moment("2024-03-15T10:20:30.456Z").tz("Asia/Tokyo").isBefore($moment("2024-03-15T16:00:00Z"), "day")': true,
      '$moment("2024-03-15T10:20:30.456Z").isAfter("2024-03-15T10:20:30.455Z")': true,
      '$moment("2024-03-15T10:20:30.456Z").unix()': 1710498030,
    });
  });

  it('mutates the moment it is called on, unless cloned', async () => {
    assert.equal(await evaluate('($m := $moment(0).utc(); $m.add(1, "d"); $m.valueOf())'), 86400000);
    assert.equal(await evaluate('($m := $moment(0).utc(); $m.clone().add(1, "d"); $m.valueOf())'), 0);
  });
});

describe('$moment: construction', () => {
  it('reads ISO 8601 and formatted strings as local time unless they carry an offset', async () => {
    process.env.TZ = 'America/New_York';
    await assertEvaluates({
      '$moment("2024-01-07").valueOf()': 1704603600000,
      '$moment("2024-01-07T15:04:05,1239+05:30").toISOString()': '2024-01-07T09:34:05.123Z',
      '$moment("20240107T150405Z").toISOString()': '2024-01-07T15:04:05.000Z',
      '$moment("2024-01-07T24:00").format()': '2024-01-08T00:00:00-05:00',
      '$moment("31/12/2023", "DD/MM/YYYY").format("YYYY-MM-DD")': '2023-12-31',
      '$moment("7/1/2024 3:04 pm", "D/M/YYYY h:mm a").format("YYYY-MM-DD HH:mm")': '2024-01-07 15:04',
      '$moment("12:05 AM", "hh:mm A").format("HH:mm")': '00:05',
      '$moment("2024-01-07 15:04:05.123", "YYYY-MM-DD HH:mm:ss.SSS").valueOf()': 1704657845123,
      '$moment("1704639845", "X").toISOString()': '2024-01-07T15:04:05.000Z',
      '$moment([2024, 0, 31]).add(1, "M").format("YYYY-MM-DD")': '2024-02-29',
    });
  });

  it('makes an invalid moment of input moment rejects', async () => {
    await assertEvaluates({
      '$moment("nonsense").format()': 'Invalid date',
      '$moment("nonsense").isValid()': false,
      '$moment("2024-02-30").format()': 'Invalid date',
      '$moment("32/01/2024", "DD/MM/YYYY").format()': 'Invalid date',
      '$moment("2024-01-07T25:00").isValid()': false,
      '$moment(null).isValid()': false,
      '$moment("nonsense").toISOString()': null,
    });
  });

  it('gives the current time without arguments and Dates from toDate', async () => {
    const before = Date.now();
    const now = await evaluate('$moment().valueOf()') as number;
    assert.ok(now >= before && now <= Date.now());
    assert.deepEqual(await evaluate('$moment(1704639845123).toDate()'), new Date(1704639845123));
    assert.equal(await evaluate('$string($moment(1704639845123))'), '"2024-01-07T15:04:05.123Z"');
  });
});

describe('$moment in a deployed change node', () => {
  const t = flowSuite(() => {
    const rules = [{ t: 'set', p: 'payload', pt: 'msg', to: '$moment(payload).tz("Asia/Tokyo").format("YYYY-MM-DD HH:mm")', tot: 'jsonata' }];
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'moment' },
      node('tokyo', 'change', { rules }, [['cap']]),
      node('cap', 'test-capture'),
    ];
    return flows;
  });

  test('formats the payload in Tokyo time', async () => {
    t.receive('tokyo', { _msgid: 'm1', payload: 1704639845123 });
    assert.deepEqual(await t.capture.waitFor('cap'), [{ _msgid: 'm1', payload: '2024-01-08 00:04' }]);
  });
});
