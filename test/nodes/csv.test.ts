import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

/** The editor's shape of a csv node made in Node-RED 4 ("rfc"); legacy nodes lack `spec`. */
const rfc = { spec: 'rfc', sep: ',', hdrin: '', hdrout: 'none', multi: 'one', ret: '\\n', temp: '', skip: '0', strings: true, include_empty_strings: '', include_null_values: '' };
const { spec: _spec, ...legacy } = rfc;

describe('csv node', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'csv' },
      node('rows', 'csv', { ...rfc, hdrin: true }, [['rows-out']]),
      node('array', 'csv', { ...rfc, multi: 'mult', temp: 'a,,c', strings: false, include_empty_strings: true, include_null_values: true }, [['array-out']]),
      node('skip', 'csv', { ...rfc, multi: 'mult', skip: '1', sep: '\\t' }, [['skip-out']]),
      node('numbers', 'csv', { ...rfc, hdrin: true, multi: 'mult' }, [['numbers-out']]),
      node('out', 'csv', { ...rfc, temp: ' a ,, b ', hdrout: 'all' }, [['out-out']]),
      node('once', 'csv', { ...rfc, sep: ';', hdrout: 'once', ret: '\\r\\n' }, [['once-out']]),
      node('lines', 'csv', { ...rfc, hdrin: true }, [['lines-out']]),
      node('bad-template', 'csv', { ...rfc, temp: 'a,"b' }, [['rows-out']]),
      node('not-csv', 'csv', rfc, [['rows-out']]),
      node('not-csv-status', 'status', { scope: ['not-csv', 'bad-template'] }, [['status-out']]),
      node('not-csv-catch', 'catch', { scope: ['not-csv'], uncaught: false }, [['catch-out']]),
      node('legacy-in', 'csv', { ...legacy, hdrin: true, multi: 'mult', include_empty_strings: true }, [['legacy-out']]),
      node('legacy-row-start', 'csv', legacy, [['legacy-out']]),
      node('legacy-catch', 'catch', { scope: ['legacy-row-start'], uncaught: false }, [['catch-out']]),
      node('legacy-to', 'csv', { ...legacy, temp: ' a ,, b ', hdrout: 'all' }, [['legacy-out']]),
      node('legacy-lines', 'csv', { ...legacy, hdrin: true }, [['legacy-lines-out']]),
      ...['rows-out', 'array-out', 'skip-out', 'numbers-out', 'out-out', 'once-out', 'lines-out', 'status-out', 'catch-out', 'legacy-out', 'legacy-lines-out']
        .map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('rfc: a header row names columns; quotes keep separators, quotes and newlines; a record\'s empty last field is dropped', async () => {
    receive('rows', { _msgid: 'in1', payload: 'name,n,note\r\n"Smith, J",42,"said ""hi""\nthen left"\r\nBob,-1.5e3,\r\n' });
    const rows = await t.capture.waitFor('rows-out', 2);
    assert.deepEqual(rows, [
      { _msgid: 'in1', columns: 'name,n,note', payload: { name: 'Smith, J', n: 42, note: 'said "hi"\nthen left' }, parts: { id: 'in1', index: 0, count: 2 } },
      { _msgid: 'in1', columns: 'name,n,note', payload: { name: 'Bob', n: -1500 }, parts: { id: 'in1', index: 1, count: 2 } },
    ]);
  });

  test('rfc: a template skips empty column names; strings stay strings; empty and null values are kept on request', async () => {
    receive('array', { _msgid: 'in2', payload: '1,2,"3"\n"",x,\n' });
    const [msg] = await t.capture.waitFor('array-out');
    assert.deepEqual(msg, { _msgid: 'in2', columns: 'a,c', payload: [{ a: '1', c: '3' }, { a: '', c: null }] });
  });

  test('rfc: skipped lines, a tab separator and generated column names', async () => {
    receive('skip', { _msgid: 'in3', payload: 'title line\n1\t"a\tb"\t3\n' });
    const [msg] = await t.capture.waitFor('skip-out');
    assert.deepEqual(msg, { _msgid: 'in3', columns: 'col1,col2,col3', payload: [{ col1: 1, col2: 'a\tb', col3: 3 }] });
  });

  test('rfc: numbers as JavaScript reads them, except leading zeros and plus signs', async () => {
    receive('numbers', { _msgid: 'in4', payload: 'a,b,c,d\r\n007,+5,0x1F, 12 \r\n' });
    const [msg] = await t.capture.waitFor('numbers-out');
    assert.deepEqual(msg, { _msgid: 'in4', columns: 'a,b,c,d', payload: [{ a: '007', b: '+5', c: 31, d: 12 }] });
  });

  test('rfc: objects become CSV under untrimmed template names; CR is quoted; null is written as null', async () => {
    receive('out', { _msgid: 'o1', payload: [{ ' a ': 'x\ry', b: null }, { ' a ': { k: 1 }, ' b ': 'say "x"' }] });
    const [msg] = await t.capture.waitFor('out-out');
    assert.deepEqual(msg, { _msgid: 'o1', columns: ' a , b ', payload: ' a ,, b \n"x\ry",,\n"{""k"":1}",,"say ""x"""\n' });
  });

  test('rfc: the header is sent once until msg.reset; arrays get index names; nested values are left out without a template', async () => {
    receive('once', { _msgid: 'h1', payload: [['no', 'names']] });
    receive('once', { _msgid: 'h2', payload: { a: 1, b: { c: 2 }, d: 'x;y' } });
    receive('once', { _msgid: 'h3', reset: true });
    receive('once', { _msgid: 'h4', payload: [5, '6'], columns: 'p,"q,r"' });
    const out = await t.capture.waitFor('once-out', 3);
    assert.deepEqual(out.map((m) => [m.payload, m.columns]), [['0;1\r\nno;names\r\n', '0,1'], ['1;"x;y"\r\n', 'a,b,d'], ['p;q,r\r\n5;6\r\n', 'p,"q,r"']]);
  });

  test('rfc: lines arriving one per message with parts: header taken from the first, counts shifted, last completes', async () => {
    const lines = ['x,y', '1,2', '3,4'];
    lines.forEach((payload, index) => receive('lines', { _msgid: `l${index}`, payload, parts: { id: 'f', index, count: 3, type: 'string', ch: '\n' } }));
    const out = await t.capture.waitFor('lines-out', 2);
    assert.deepEqual(out, [
      { _msgid: 'l1', columns: 'x,y', payload: { x: 1, y: 2 }, parts: { id: 'f', index: 0, count: 2, type: 'string', ch: '\n' } },
      { _msgid: 'l2', columns: 'x,y', payload: { x: 3, y: 4 }, parts: { id: 'f', index: 1, count: 2, type: 'string', ch: '\n' }, complete: true },
    ]);
  });

  test('rfc: a malformed template stops the node with a red status; other payload types are a catchable error', async () => {
    receive('bad-template', { _msgid: 'bt', payload: '1,2' });
    receive('not-csv', { _msgid: 'n1', payload: 5 });
    const [caught] = await t.capture.waitFor('catch-out');
    assert.equal(caught._msgid, 'n1');
    assert.equal(caught.error.message, 'Error: This node only handles CSV strings or js objects.');
    // Each input first clears the status, as in Node-RED.
    const statuses = (await t.capture.waitFor('status-out', 2)).map((m) => [m.status.source.id, m.status.text ?? '', m.status.fill ?? '']);
    assert.deepEqual(statuses.slice(-2), [['not-csv', '', ''], ['not-csv', 'This node only handles CSV strings or js objects.', 'red']]);
    assert.equal(t.capture.of('rows-out').filter((m) => m._msgid === 'bt').length, 0);
    assert.ok(t.server.logs.some((l) => l.includes('Malformed columns template.')));
  });

  test('legacy (no spec): names trimmed; CR and LF each end a record; strict number pattern; empty values after line starts', async () => {
    receive('legacy-in', { _msgid: 'lg', payload: ' name , n \r\n007,1e3\n,x\n' });
    const [msg] = await t.capture.waitFor('legacy-out');
    assert.deepEqual(msg, { _msgid: 'lg', columns: 'name,n', payload: [{ name: '' }, { name: '007', n: 1000 }, { n: 'x' }, { name: '' }] });
  });

  test('legacy: a line starting with the separator fails as in Node-RED', async () => {
    receive('legacy-row-start', { _msgid: 'lz', payload: ',1,2' });
    const caught = (await t.capture.waitFor('catch-out', 2)).find((m) => m._msgid === 'lz');
    assert.equal(caught?.error.message, "TypeError: Cannot read properties of undefined (reading 'includes')");
  });

  test('legacy: objects to CSV with trimmed names, CR unquoted, empty names kept in msg.columns', async () => {
    receive('legacy-to', { _msgid: 'lo', payload: [{ a: 'x\ry', b: null }, { a: { k: 1 }, b: 'say "x"' }] });
    const out = await t.capture.waitFor('legacy-out', 2);
    assert.deepEqual(out[1], { _msgid: 'lo', columns: 'a,,b', payload: 'a,,b\nx\ry,,null\n"{""k"":1}",,"say ""x"""\n' });
  });

  test('legacy: lines one per message with parts; a non-CSV payload is not an error', async () => {
    const lines = ['x,y', '1,2', '3,4'];
    lines.forEach((payload, index) => receive('legacy-lines', { _msgid: `m${index}`, payload, parts: { id: 'g', index, count: 3 } }));
    receive('legacy-lines', { _msgid: 'num', payload: 5 });
    receive('legacy-lines', { _msgid: 'after', payload: 'p,q\n5,6' });
    const out = await t.capture.waitFor('legacy-lines-out', 3);
    assert.deepEqual(out.map((m) => [m.payload, m.parts, m.complete]), [
      [{ x: 1, y: 2 }, { id: 'g', index: 0, count: 2 }, undefined],
      [{ x: 3, y: 4 }, { id: 'g', index: 1, count: 2 }, true],
      [{ p: 5, q: 6 }, { id: 'after', index: 0, count: 1 }, undefined],
    ]);
  });
});
