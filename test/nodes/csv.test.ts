import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

const defaults = { sep: ',', hdrin: '', hdrout: 'none', multi: 'one', ret: '\\n', temp: '', skip: '0', strings: true, include_empty_strings: '', include_null_values: '' };

describe('csv node', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'csv' },
      node('rows', 'csv', { ...defaults, hdrin: true }, [['rows-out']]),
      node('array', 'csv', { ...defaults, multi: 'mult', temp: 'a,,c', strings: false, include_empty_strings: true, include_null_values: true }, [['array-out']]),
      node('skip', 'csv', { ...defaults, multi: 'mult', skip: '1', sep: '\\t' }, [['skip-out']]),
      node('out', 'csv', { ...defaults, temp: 'name,note', hdrout: 'all', ret: '\\r\\n' }, [['out-out']]),
      node('once', 'csv', { ...defaults, hdrout: 'once' }, [['once-out']]),
      node('lines', 'csv', { ...defaults, hdrin: true }, [['lines-out']]),
      ...['rows-out', 'array-out', 'skip-out', 'out-out', 'once-out', 'lines-out'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('a header row names columns; quotes keep separators, quotes and newlines; one message per row', async () => {
    receive('rows', { _msgid: 'in1', payload: 'name,n,note\r\n"Smith, J",42,"said ""hi""\nthen left"\r\nBob,-1.5e3,\r\n' });
    const rows = await t.capture.waitFor('rows-out', 2);
    assert.deepEqual(rows, [
      { _msgid: 'in1', columns: 'name,n,note', payload: { name: 'Smith, J', n: 42, note: 'said "hi"\nthen left' }, parts: { id: 'in1', index: 0, count: 2 } },
      { _msgid: 'in1', columns: 'name,n,note', payload: { name: 'Bob', n: -1500 }, parts: { id: 'in1', index: 1, count: 2 } },
    ]);
  });

  test('a template skips empty column names; strings stay strings; empty and null values are kept on request', async () => {
    receive('array', { _msgid: 'in2', payload: '1,2,"3"\n"",x,\n' });
    const [msg] = await t.capture.waitFor('array-out');
    assert.deepEqual(msg, { _msgid: 'in2', columns: 'a,c', payload: [{ a: '1', c: '3' }, { a: '', c: null }] });
  });

  test('skipped lines, a tab separator and generated column names', async () => {
    receive('skip', { _msgid: 'in3', payload: 'title line\n1\t"a\tb"\t3\n' });
    const [msg] = await t.capture.waitFor('skip-out');
    assert.deepEqual(msg, { _msgid: 'in3', columns: 'col1,col2,col3', payload: [{ col1: 1, col2: 'a\tb', col3: 3 }] });
  });

  test('objects become CSV with a header, quoting what needs it, with the chosen line ending', async () => {
    receive('out', { _msgid: 'o1', payload: [{ name: 'A, B', note: 'say "x"' }, { name: 'multi\nline', note: 7 }, { name: 'only' }] });
    const [msg] = await t.capture.waitFor('out-out');
    assert.deepEqual(msg, { _msgid: 'o1', columns: 'name,note', payload: 'name,note\r\n"A, B","say ""x"""\r\n"multi\nline",7\r\nonly,\r\n' });
  });

  test('the header is sent once until msg.reset; arrays are rows', async () => {
    receive('once', { _msgid: 'h1', payload: { a: 1, b: 2 } });
    receive('once', { _msgid: 'h2', payload: { a: 3, b: 4 } });
    receive('once', { _msgid: 'h3', reset: true });
    receive('once', { _msgid: 'h5', payload: [['no', 'names']] });
    receive('once', { _msgid: 'h4', payload: [[5, 'x,y']], columns: 'a,b' });
    const out = await t.capture.waitFor('once-out', 4);
    assert.deepEqual(out.map((m) => m.payload), ['a,b\n1,2\n', '3,4\n', 'no,names\n', 'a,b\n5,"x,y"\n']);
  });

  test('lines arriving one per message with parts: header taken from the first, counts shifted, last completes', async () => {
    const lines = ['x,y', '1,2', '3,4'];
    lines.forEach((payload, index) => receive('lines', { _msgid: `l${index}`, payload, parts: { id: 'f', index, count: 3, type: 'string', ch: '\n' } }));
    const out = await t.capture.waitFor('lines-out', 2);
    assert.deepEqual(out, [
      { _msgid: 'l1', columns: 'x,y', payload: { x: 1, y: 2 }, parts: { id: 'f', index: 0, count: 2, type: 'string', ch: '\n' } },
      { _msgid: 'l2', columns: 'x,y', payload: { x: 3, y: 4 }, parts: { id: 'f', index: 1, count: 2, type: 'string', ch: '\n' }, complete: true },
    ]);
  });
});
