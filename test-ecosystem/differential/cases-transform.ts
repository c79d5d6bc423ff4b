/** template, range and the parsers (json, yaml, xml, html, csv). */
import type { DiffCase } from './harness.js';

const template = (template: string, extra: Record<string, unknown> = {}) =>
  ({ field: 'payload', fieldType: 'msg', format: 'handlebars', syntax: 'mustache', template, output: 'str', ...extra });
const range = (action: string, round: boolean, minin = '0', maxin = '10', minout = '0', maxout = '100') =>
  ({ minin, maxin, minout, maxout, action, round, property: 'payload' });

/** A node fed each value of the payload array in turn, every output answered together. */
function perValue(name: string, about: string, type: string, props: Record<string, unknown>, values: unknown[]): DiffCase {
  return {
    name, about, collect: 'last',
    build: (k) => [k.fan('start', 'n'), k.node('n', type, props, 'out')],
    requests: [{ msg: { payload: values } }],
  };
}

export const templateCases: DiffCase[] = [
  {
    name: 'template-mustache',
    about: 'nested paths, escaped and triple-brace values, sections, flow/global context and env',
    build: (k) => [
      k.change('start', [{ t: 'set', p: 'tv', pt: 'flow', to: 'flow-value', tot: 'str' }], 't'),
      k.node('t', 'template', template('Hi {{payload.user.name}}! {{payload.html}} {{{payload.html}}} {{#payload.items}}[{{.}}]{{/payload.items}}'
        + '{{^payload.none}} none{{/payload.none}} {{flow.tv}} {{env.DIFF_NAME}} {{topic}}'), 'out'),
    ],
    requests: [{ msg: { payload: { user: { name: 'Ann' }, html: '<b>&"x"</b>', items: [1, 'two', 3] }, topic: 'top' } }],
  },
  {
    name: 'template-output-json',
    about: 'output parsed as JSON into msg.payload',
    build: (k) => [k.node('start', 'template', template('{"n": {{payload.n}}, "s": "{{payload.s}}", "list": [{{#payload.l}}{{.}},{{/payload.l}}0]}', { output: 'json' }), 'out')],
    requests: [{ msg: { payload: { n: 7, s: 'str', l: [1, 2] } } }],
  },
  {
    name: 'template-output-yaml',
    about: 'output parsed as YAML',
    build: (k) => [k.node('start', 'template', template('name: {{payload.name}}\nlist:\n  - a\n  - {{payload.n}}\nnested:\n  ok: true\n', { output: 'yaml', format: 'yaml' }), 'out')],
    requests: [{ msg: { payload: { name: 'Bob', n: 3 } } }],
  },
  {
    name: 'template-plain-field',
    about: 'plain syntax leaves braces alone; field writes another property',
    build: (k) => [k.node('start', 'template', template('{{payload}} stays ${DIFF_NAME}', { syntax: 'plain', field: 'topic', format: 'text' }), 'out')],
    requests: [{ msg: { payload: 'p' } }],
  },
  {
    name: 'template-env-whole-value',
    about: 'a property that is exactly ${VAR} is replaced by the environment variable at deploy',
    build: (k) => [k.node('start', 'template', template('${DIFF_NAME}'), 'out')],
    requests: [{ msg: { payload: 'p' } }],
  },
  {
    name: 'template-object-value',
    about: 'an object or array rendered by {{payload}} (mustache calls toString / JSON)',
    build: (k) => [k.node('start', 'template', template('{{payload.obj}}|{{payload.arr}}|{{payload.num}}|{{payload.missing}}|{{payload.flag}}'), 'out')],
    requests: [{ msg: { payload: { obj: { a: 1 }, arr: [1, 'b'], num: 1.5, flag: false } } }],
  },
];

export const rangeCases: DiffCase[] = [
  perValue('range-scale', 'scale without rounding, including out-of-range inputs and numeric strings', 'range', range('scale', false),
    [0, 5, 10, 15, -5, 3.3, '7']),
  perValue('range-clamp-round', 'clamp with rounding onto a reversed output range', 'range', range('clamp', true, '0', '10', '100', '0'),
    [-1, 2.5, 11, 7.77]),
  perValue('range-roll', 'roll wraps inputs around the input range', 'range', range('roll', false, '0', '10', '0', '360'),
    [12, -3, 25, 10]),
];

const json = (action: string, extra: Record<string, unknown> = {}) => ({ property: 'payload', action, pretty: false, ...extra });

export const parserCases: DiffCase[] = [
  perValue('json-auto', 'auto direction: string parsed, object stringified', 'json', json(''),
    ['{"a":[1,2],"b":"x"}', { c: true, d: [null] }, '[1,2]', 5]),
  perValue('json-forced', 'action str always stringifies, pretty-printed', 'json', json('str', { pretty: true }),
    [{ a: { b: 1 } }, 'already']),
  {
    name: 'json-property-obj',
    about: 'a non-payload property with action obj',
    build: (k) => [k.node('start', 'json', json('obj', { property: 'payload.inner' }), 'out')],
    requests: [{ msg: { payload: { inner: '{"deep":{"x":1}}', other: 1 } } }],
  },
  {
    name: 'json-invalid-catch',
    about: 'an unparsable string is reported to the tab\'s catch node with the message',
    build: (k) => [
      k.node('start', 'json', json(''), 'out'),
      k.node('catch', 'catch', { scope: null, uncaught: false }, 'out'),
    ],
    requests: [{ msg: { payload: '{not json' } }],
  },
  perValue('yaml-both', 'YAML string to object and object to YAML string', 'yaml', { property: 'payload' },
    ['a: 1\nb:\n  - x\n  - y\nc: "str"\n', { name: 'n', list: [1, { k: 'v' }], flag: true }]),
  perValue('xml-parse', 'XML to object with default attribute and text keys', 'xml', { property: 'payload', attr: '', chr: '' },
    ['<root a="1"><item id="x">one</item><item>two</item><empty/></root>', '<n>5</n>']),
  // One direction per case: Node-RED parses asynchronously but builds synchronously, so a mixed
  // burst would come out reordered.
  perValue('xml-options-parse', 'XML to object with custom attribute and text keys', 'xml', { property: 'payload', attr: 'ATTR', chr: 'TEXT' },
    ['<p lang="en">hello <b>world</b></p>']),
  perValue('xml-options-build', 'object to XML when custom attribute and text keys are set', 'xml', { property: 'payload', attr: 'ATTR', chr: 'TEXT' },
    [{ doc: { ATTR: { v: '2' }, TEXT: 'body', child: ['c1', 'c2'] } }]),
  perValue('xml-build', 'object to XML with the default keys', 'xml', { property: 'payload', attr: '', chr: '' },
    [{ root: { $: { id: '7' }, item: ['a', 'b'], sub: { _: 'txt', $: { k: 'v' } } } }]),
];

const html = (tag: string, ret: string, as = 'single') => ({ property: 'payload', outproperty: 'payload', tag, ret, as, chr: '_' });
const PAGE = '<html><body><ul id="l"><li class="a">One <b>1</b></li><li>Two</li><li class="a">Three</li></ul>'
  + '<a href="/x" title="X">link</a><a href="/y">y</a></body></html>';

export const htmlCases: DiffCase[] = [
  {
    name: 'html-single', about: 'selector, ret html / text / attr, as single (an array per message)', collect: 3,
    build: (k) => [
      k.fn('start', 'return [msg, RED.util.cloneMessage(msg), RED.util.cloneMessage(msg)];', 'h1', 'h2', 'h3'),
      k.node('h1', 'html', html('li.a', 'html'), 'out'),
      k.node('h2', 'html', html('ul#l li', 'text'), 'out'),
      k.node('h3', 'html', html('a', 'attr'), 'out'),
    ],
    requests: [{ msg: { payload: PAGE } }],
  },
  {
    name: 'html-multi', about: 'as multi: one message per element with msg.parts', collect: 3,
    build: (k) => [k.node('start', 'html', html('li', 'text', 'multi'), 'out')],
    requests: [{ msg: { payload: PAGE } }],
  },
];

const csv = (extra: Record<string, unknown>) => ({
  spec: 'rfc', sep: ',', hdrin: '', hdrout: 'none', multi: 'one', ret: '\\r\\n', temp: '', skip: '0', strings: true,
  include_empty_strings: '', include_null_values: '', ...extra,
});

export const csvCases: DiffCase[] = [
  perValue('csv-header', 'parse with a header row into one array; numbers become numbers', 'csv', csv({ hdrin: true, multi: 'mult' }),
    ['name,age,note\r\nann,31,"a, b"\r\nbob,4.5,"say ""hi"""\r\n']),
  {
    ...perValue('csv-semicolon', 'semicolon separator without header: col1.. names, empty fields left out', 'csv', csv({ sep: ';', multi: 'mult' }),
      ['1;"x;y";\n2;z;3\n']),
    deviation: {
      why: 'Node-RED names the columns after the first row without its empty last field and then drops the third value of row 2; Runnel keeps it',
      runnel: (red) => {
        const body = structuredClone(red.body) as { payload: Record<string, unknown>[]; columns: string }[];
        body[0].payload[1].col3 = 3;
        body[0].columns = 'col1,col2,col3';
        return { ...red, body };
      },
    },
  },
  perValue('csv-strings', 'strings false keeps numbers as text; templated column names; skip lines', 'csv', csv({ strings: false, temp: 'a,b', skip: '1', multi: 'mult' }),
    ['junk line\n01,2e3\n']),
  {
    name: 'csv-per-row', about: 'one message per row (multi "one") with msg.parts and msg.columns', collect: 2,
    build: (k) => [k.node('start', 'csv', csv({ hdrin: true }), 'out')],
    requests: [{ msg: { payload: 'a,b\n1,2\n3,4\n' } }],
  },
  perValue('csv-to-csv', 'objects to CSV with template columns and a header', 'csv', csv({ temp: 'a,b,c', hdrout: 'all', ret: '\\n' }),
    [[{ a: 1, b: 'x,y', c: 'q"q' }, { a: 2, c: true }], { b: 'only' }]),
  perValue('csv-to-csv-auto', 'to CSV without template columns takes the keys; arrays of arrays', 'csv', csv({ hdrout: 'once' }),
    [[{ x: 1, y: 2 }, { x: 3, y: 4 }], [[1, 2], ['a', 'b']]]),
];
