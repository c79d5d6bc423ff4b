/**
 * csv in both of Node-RED 4's modes (rfc, and legacy: a node with no `spec`, as every flow exported
 * before 4.0 has), html on whole documents and its "compl" output, range with reversed and
 * rounded ranges.
 */
import type { DiffCase, Kit } from './harness.js';

/**
 * Sends each element of msg.payload as a whole message of its own (so a case can send messages
 * without a payload, or with msg.reset or msg.parts), flagging the final one `last`.
 */
const SEND_EACH = `const list = msg.payload;
list.forEach((m, i) => {
  const out = Object.assign({ _msgid: msg._msgid + '-' + i, req: msg.req, res: msg.res }, m);
  if (i === list.length - 1) out.last = true;
  node.send(out);
});
return null;`;

function sequence(name: string, about: string, type: string, props: Record<string, unknown>, msgs: Record<string, unknown>[]): DiffCase {
  return {
    name, about, collect: 'last',
    build: (k: Kit) => [k.fn('start', SEND_EACH, 'n'), k.node('n', type, props, 'out')],
    requests: [{ msg: { payload: msgs } }],
  };
}

const base = { sep: ',', hdrin: '', hdrout: 'none', multi: 'one', ret: '\\n', temp: '', skip: '0', strings: true, include_empty_strings: '', include_null_values: '' };
const rfc = (extra: Record<string, unknown>) => ({ spec: 'rfc', ...base, ...extra });
const legacy = (extra: Record<string, unknown>) => ({ ...base, ...extra });

export const csvModeCases: DiffCase[] = [
  sequence('csv-legacy-parse', 'legacy: trimmed header names, CR and LF each ending a record, strict numbers, empty strings kept', 'csv',
    legacy({ hdrin: true, multi: 'mult', include_empty_strings: true }),
    [{ payload: ' name , n \r\n007,1e3\n,x\n"a ""q""",-2.5\n' }]),
  sequence('csv-legacy-no-header', 'legacy: generated names, nulls on request, unterminated quote, skip', 'csv',
    legacy({ multi: 'mult', skip: '1', include_null_values: true, strings: false }),
    [{ payload: 'junk\n1,,3\n4,"5,6",\n"open,7' }]),
  sequence('csv-legacy-to-csv', 'legacy: objects and arrays to CSV, trimmed template names, header always', 'csv',
    legacy({ temp: ' a ,, b ', hdrout: 'all' }),
    [{ payload: [{ a: 'x\ry', b: null }, { a: { k: 1 }, b: 'say "x"' }] }, { payload: [[1, 'p,q'], ['r"s', 't\nu']] }]),
  sequence('csv-legacy-keys', 'legacy: objects without template use the first row\'s keys; header once until msg.reset', 'csv',
    legacy({ hdrout: 'once', sep: ';' }),
    [{ payload: { a: 1, b: 'x;y', c: { n: 1 } } }, { payload: { a: 2, b: 3 } }, { reset: true }, { payload: [{ a: 4, b: 5 }] }]),
  sequence('csv-legacy-lines', 'legacy: one line per message with parts (multi one and the rows of a sequence)', 'csv',
    legacy({ hdrin: true }),
    ['x,y', '1,2', '3,4'].map((payload, index) => ({ payload, parts: { id: 'p', index, count: 3, type: 'string', ch: '\n' } }))),
  sequence('csv-rfc-lines-array', 'rfc: a sequence of lines gathered into one array message', 'csv',
    rfc({ hdrin: true, multi: 'mult' }),
    ['x,y', '1,2', '3,"a,b"'].map((payload, index) => ({ payload, parts: { id: 'p', index, count: 3, type: 'string', ch: '\n' } }))),
  sequence('csv-rfc-numbers-quotes', 'rfc: numbers as JavaScript reads them except leading zeros and signs; stray quotes; CRLF', 'csv',
    rfc({ hdrin: true, multi: 'mult', include_empty_strings: true }),
    [{ payload: 'a,b,c,d,e\r\n007,+5,0x1F, 12 ,""\r\nx"y,"ab"c,1e3,-0.5,\r\n' }]),
  sequence('csv-rfc-to-csv', 'rfc: untrimmed quoted template names, null written as null, CR quoted, header once and msg.reset', 'csv',
    rfc({ temp: '" a,1",, b ', hdrout: 'once', ret: '\\r\\n' }),
    [{ payload: [{ ' a,1': 'x\ry', ' b ': null }, { ' a,1': { k: 1 } }] }, { payload: { ' b ': 'q"q' } }, { reset: true }, { payload: [[1, 2, 3]] }]),
  sequence('csv-rfc-arrays', 'rfc: arrays without a template get index names in the header; msg.columns names them otherwise', 'csv',
    rfc({ hdrout: 'all', sep: ';' }),
    [{ payload: [['no', 'names']] }, { payload: [5, '6;7'], columns: 'p,"q,r"' }, { payload: { a: 1, b: { c: 2 }, d: 'x' } }]),
];

const html = (tag: string, ret: string, extra: Record<string, unknown> = {}) => ({ property: 'payload', outproperty: 'payload', tag, ret, as: 'single', chr: '_', ...extra });
const DOC = '<html><head><title>Doc</title></head><body><p id="a" class="c">Hi <b>x</b></p><p>y</p></body></html>';

export const htmlDocCases: DiffCase[] = [
  {
    name: 'html-document', about: 'the input is a whole document: head, title and body can be selected', collect: 2,
    build: (k) => [
      k.fn('start', 'return [msg, RED.util.cloneMessage(msg)];', 'h1', 'h2'),
      k.node('h1', 'html', html('title', 'text'), 'out'),
      k.node('h2', 'html', html('body > p', 'text'), 'out'),
    ],
    requests: [{ msg: { payload: DOC } }],
  },
  {
    name: 'html-compl', about: 'ret compl: attributes plus the inner markup under the chr key, as single and multi', collect: 3,
    build: (k) => [
      k.fn('start', 'return [msg, RED.util.cloneMessage(msg)];', 'h1', 'h2'),
      k.node('h1', 'html', html('p', 'compl', { chr: 'inner' }), 'out'),
      k.node('h2', 'html', html('p', 'compl', { as: 'multi' }), 'out'),
    ],
    requests: [{ msg: { payload: DOC } }],
  },
];

const range = (action: string, round: boolean, minin: string, maxin: string, minout: string, maxout: string) =>
  ({ minin, maxin, minout, maxout, action, round, property: 'payload' });

export const rangeEdgeCases: DiffCase[] = [
  sequence('range-reversed-drop', 'a reversed input range is swapped together with the output range', 'range',
    range('drop', false, '10', '0', '0', '100'), [{ payload: 3 }, { payload: 11 }, { payload: 10 }]),
  sequence('range-round-narrow', 'rounding first narrows the output range to whole numbers', 'range',
    range('scale', true, '0', '10', '0.5', '10.7'), [{ payload: 0 }, { payload: 10 }, { payload: '5' }]),
];
