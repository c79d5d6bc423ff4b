/** The parsers' per-message options: msg.options for xml (xml2js's options), msg.schema for json. */
import type { DiffCase, DiffRequest } from './harness.js';

const json = (action: string, extra: Record<string, unknown> = {}) => ({ property: 'payload', action, pretty: false, ...extra });
const xml = { property: 'payload', attr: '', chr: '' };

/** A node under test whose errors reach `out` through the tab's catch node; one message per request. */
function single(name: string, about: string, type: string, props: Record<string, unknown>, requests: DiffRequest[]): DiffCase {
  return {
    name, about, requests,
    build: (k) => [k.node('start', type, props, 'out'), k.node('catch', 'catch', { scope: null, uncaught: false }, 'out')],
  };
}

const SCHEMA = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'string', maxLength: 2 } }, required: ['a'] };
const DRAFT06 = { $schema: 'http://json-schema.org/draft-06/schema#', type: 'array', items: { type: 'integer' }, contains: { const: 3 } };

export const jsonSchemaCases: DiffCase[] = [
  single('json-schema-toggle', 'msg.schema validates both directions; failures carry schemaError; a bad schema fails to compile', 'json', json(''), [
    { msg: { payload: '{"a":1,"b":"ok"}', schema: SCHEMA } },
    { msg: { payload: '{"a":"x","b":"long"}', schema: SCHEMA } },
    { msg: { payload: { a: 2 }, schema: SCHEMA } },
    { msg: { payload: { b: 7 }, schema: SCHEMA } },
    { msg: { payload: '{"a":1}', schema: { type: 'nonsense' } } },
    { msg: { payload: '{"a":1}', schema: SCHEMA } },
    { msg: { payload: '{broken', schema: SCHEMA } },
  ]),
  single('json-schema-str', 'action str validates strings without converting them and objects before stringifying', 'json', json('str', { pretty: true }), [
    { msg: { payload: '{"a":1}', schema: SCHEMA } },
    { msg: { payload: '{"b":1}', schema: SCHEMA } },
    { msg: { payload: { a: 1, b: 'x' }, schema: SCHEMA } },
    { msg: { payload: { a: 'no' }, schema: SCHEMA } },
  ]),
  single('json-schema-obj-draft06', 'action obj with a draft-06 schema', 'json', json('obj'), [
    { msg: { payload: [1, 3], schema: DRAFT06 } },
    { msg: { payload: [1.5, 2], schema: DRAFT06 } },
    { msg: { payload: '[3]', schema: DRAFT06 } },
  ]),
  single('json-schema-nested-property', 'validation reads msg[property] literally, so a nested path validates undefined', 'json', json('obj', { property: 'payload.inner' }), [
    { msg: { payload: { inner: '{"a":1}' }, schema: SCHEMA } },
  ]),
  {
    name: 'json-buffer', about: 'a Buffer holding JSON is parsed like a string', requests: [{ msg: { payload: '{"from":"buffer"}' } }],
    build: (k) => [k.fn('start', 'msg.payload = Buffer.from(msg.payload); return msg;', 'j'), k.node('j', 'json', json(''), 'out')],
  },
];

const DOC = '<Order id="7">\n  <Item sku="a">  two   words  </Item>\n  <item>plain</item>\n  <empty/>\n  <mixed>a<b>c</b>d</mixed>\n</Order>';
const OBJ = { order: { $: { id: '7' }, item: [{ _: 'x & y', $: { sku: 'a' } }, 'plain', 3], empty: [''], note: { text: 'a<b' } } };

export const xmlOptionCases: DiffCase[] = [
  single('xml-msg-options-parse', 'msg.options reaches xml2js when parsing (and Node-RED writes its keys into it)', 'xml', xml, [
    { msg: { payload: DOC, options: { explicitArray: false, mergeAttrs: true } } },
    { msg: { payload: DOC, options: { explicitRoot: false, ignoreAttrs: true, trim: true, normalize: true } } },
    { msg: { payload: DOC, options: { normalizeTags: true, explicitCharkey: true, emptyTag: 'E', attrkey: 'A' } } },
    { msg: { payload: DOC, options: { explicitChildren: true, charsAsChildren: true, childkey: 'kids' } } },
    { msg: { payload: '<a x="1"><b>t</b><b/></a>', options: { strict: false, emptyTag: null } } },
    { msg: { payload: '  ', options: {} } },
  ]),
  single('xml-msg-options-build', 'msg.options reaches the xml2js Builder (pretty by default once options are given)', 'xml', xml, [
    { msg: { payload: OBJ, options: {} } },
    { msg: { payload: OBJ, options: { headless: true, renderOpts: { pretty: false } } } },
    { msg: { payload: OBJ, options: { rootName: 'doc', renderOpts: { pretty: true, indent: '\t', newline: '\r\n' } } } },
    { msg: { payload: OBJ, options: { xmldec: { version: '1.1', encoding: 'ISO-8859-1', standalone: false }, cdata: true } } },
    { msg: { payload: OBJ, options: { doctype: { pubID: '-//X//EN', sysID: 'x.dtd' }, renderOpts: { pretty: true, allowEmpty: true, spaceBeforeSlash: true } } } },
    { msg: { payload: { a: { A: { k: 'v' }, C: 'text' } }, options: { attrkey: 'A', charkey: 'C', renderOpts: { pretty: false } } } },
    { msg: { payload: { 'bad name': 1 }, options: {} } },
  ]),
];
