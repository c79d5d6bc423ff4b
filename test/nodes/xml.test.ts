import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/server.js';
import { type Conf, flowSuite, node } from './flow.js';

const DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';

describe('xml node', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'xml' },
      node('x', 'xml', { property: 'payload', attr: '', chr: '' }, [['x-out']]),
      node('keys', 'xml', { property: 'doc', attr: '@', chr: '#' }, [['keys-out']]),
      node('catch', 'catch', { scope: null, uncaught: false }, [['errors']]),
      ...['x-out', 'keys-out', 'errors'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('XML becomes an object in xml2js shape', async () => {
    const text = '<?xml version="1.0"?>\n<order id="7">\n  <item sku="a">2 &lt; 3</item>\n  <item>plain</item>\n  <empty/>\n  <!-- note -->\n  <code><![CDATA[<b>]]></code>\n</order>';
    receive('x', { _msgid: 'p', payload: text });
    const [msg] = await t.capture.waitFor('x-out');
    assert.deepEqual(msg, {
      _msgid: 'p',
      payload: { order: { $: { id: '7' }, item: [{ _: '2 < 3', $: { sku: 'a' } }, 'plain'], empty: [''], code: ['<b>'] } },
    });
  });

  test('an object becomes XML as xml2js builds it', async () => {
    receive('x', { _msgid: 'b', payload: { order: { $: { id: '7', q: 'a"b' }, item: [{ _: 'x & y', $: { sku: 'a' } }, 'plain', 3], empty: [''] } } });
    receive('x', { _msgid: 'r', payload: { a: 1, b: 'two' } });
    const [, built, root] = await t.capture.waitFor('x-out', 3);
    assert.deepEqual(built, { _msgid: 'b', payload: `${DECL}<order id="7" q="a&quot;b"><item sku="a">x &amp; y</item><item>plain</item><item>3</item><empty/></order>` });
    assert.deepEqual(root, { _msgid: 'r', payload: `${DECL}<root><a>1</a><b>two</b></root>` });
  });

  test('custom attribute and text keys apply to parsing; building reads $ and _ as Node-RED does', async () => {
    receive('keys', { _msgid: 'k', doc: '<a x="1">t<b>u</b></a>' });
    const [parsed] = await t.capture.waitFor('keys-out');
    assert.deepEqual(parsed, { _msgid: 'k', doc: { a: { '#': 't', '@': { x: '1' }, b: ['u'] } } });
    receive('keys', { _msgid: 'k2', doc: { a: { $: { x: '1' }, _: 't', b: ['u'] } } });
    const [, back] = await t.capture.waitFor('keys-out', 2);
    assert.deepEqual(back, { _msgid: 'k2', doc: `${DECL}<a x="1">t<b>u</b></a>` });
  });

  /** Sends `msg` to the default-keys node and returns what it sent or the error it reported. */
  async function through(msg: Record<string, unknown>): Promise<Record<string, any>> {
    const outs = t.capture.of('x-out').length;
    const errs = t.capture.of('errors').length;
    receive('x', msg);
    await eventually(() => t.capture.of('x-out').length > outs || t.capture.of('errors').length > errs);
    return t.capture.of('x-out')[outs] ?? t.capture.of('errors')[errs];
  }

  test('msg.options shape the parse as xml2js options do, and Node-RED writes its keys into them', async () => {
    const doc = '<Order id="7">\n  <Item sku="a">  two   words  </Item>\n  <item>plain</item>\n  <empty/>\n  <mixed>a<b>c</b>d</mixed>\n</Order>';
    const merged = await through({ _msgid: 'o1', payload: doc, options: { explicitArray: false, mergeAttrs: true } });
    assert.deepEqual(merged, {
      _msgid: 'o1',
      payload: { Order: { id: '7', Item: { _: '  two   words  ', sku: 'a' }, item: 'plain', empty: '', mixed: { _: 'ad', b: 'c' } } },
      options: { explicitArray: false, mergeAttrs: true, async: true, attrkey: '$', charkey: '_' },
    });
    const bare = await through({ _msgid: 'o2', payload: doc, options: { explicitRoot: false, ignoreAttrs: true, trim: true, normalize: true } });
    assert.deepEqual(bare.payload, { Item: ['two words'], item: ['plain'], empty: [''], mixed: [{ _: 'ad', b: ['c'] }] });
    const tags = await through({ _msgid: 'o3', payload: doc, options: { normalizeTags: true, explicitCharkey: true, emptyTag: 'E', attrkey: 'A' } });
    assert.deepEqual(tags.payload, {
      order: { A: { id: '7' }, item: [{ _: '  two   words  ', A: { sku: 'a' } }, { _: 'plain' }], empty: ['E'], mixed: [{ _: 'ad', b: [{ _: 'c' }] }] },
    });
    assert.deepEqual(tags.options, { normalizeTags: true, explicitCharkey: true, emptyTag: 'E', attrkey: 'A', async: true, charkey: '_' });
    const whitespace = await through({ _msgid: 'o4', payload: '<r><k> a \n\n b </k><e/><w> </w></r>', options: { explicitRoot: false, trim: true, normalize: true, emptyTag: {} } });
    assert.deepEqual(whitespace.payload, { k: ['a b'], e: [{}], w: [{}] });
    const blank = await through({ _msgid: 'o5', payload: '  ', options: {} });
    assert.equal(blank.payload, null);
  });

  test('explicitChildren gathers children under childkey; charsAsChildren moves the text there too', async () => {
    const doc = '<r id="1">t<Sub>u</Sub><e/></r>';
    const children = await through({ _msgid: 'c1', payload: doc, options: { explicitChildren: true, normalizeTags: true } });
    assert.deepEqual(children.payload, { r: { $: { id: '1' }, _: 't', $$: { sub: ['u'], e: [''] } } });
    const chars = await through({ _msgid: 'c2', payload: doc, options: { explicitChildren: true, charsAsChildren: true, childkey: 'kids' } });
    assert.deepEqual(chars.payload, { r: { $: { id: '1' }, kids: { _: 't', Sub: ['u'], e: [''] } } });
  });

  test('name and value processors given by a function node apply as in xml2js', async () => {
    const stripPrefix = (name: string) => name.replace(/(?!xmlns)^.*:/, '');
    const parseNumbers = (v: string) => (Number.isNaN(Number(v)) ? v : Number(v));
    const parseBooleans = (v: string) => (/^(?:true|false)$/i.test(v) ? v.toLowerCase() === 'true' : v);
    const msg = await through({
      _msgid: 'p1', payload: '<s:Env xmlns:s="u"><s:Body a:x="TRUE">42</s:Body></s:Env>',
      options: { tagNameProcessors: [stripPrefix], attrNameProcessors: [stripPrefix], attrValueProcessors: [parseBooleans], valueProcessors: [parseNumbers] },
    });
    assert.deepEqual(msg.payload, { Env: { $: { 'xmlns:s': 'u' }, Body: [{ _: 42, $: { x: true } }] } });
  });

  test('strict false reads names in upper case, as sax does in its loose mode', async () => {
    const msg = await through({ _msgid: 's1', payload: '<A x="1"><b>t</b><b/><c>  </c></A>', options: { strict: false } });
    assert.deepEqual(msg.payload, { A: { $: { X: '1' }, B: ['t', ''], C: ['  '] } });
  });

  test('msg.options shape the XML the Builder writes; given options mean pretty printing by default', async () => {
    const pretty = await through({ _msgid: 'b1', payload: { a: { $: { k: 'v' }, b: ['u', { _: 't', c: 1 }], e: '' } }, options: {} });
    assert.deepEqual(pretty, {
      _msgid: 'b1',
      payload: `${DECL}\n<a k="v">\n  <b>u</b>\n  <b>\n    t\n    <c>1</c>\n  </b>\n  <e/>\n</a>`,
      options: { async: false },
    });
    const headless = await through({ _msgid: 'b2', payload: { a: '1' }, options: { headless: true, rootName: 'doc', renderOpts: { pretty: true, indent: '\t', newline: '\r\n' } } });
    assert.equal(headless.payload, '<doc>\r\n\t<a>1</a>\r\n</doc>');
    const cdata = await through({
      _msgid: 'b3', payload: { a: { _: 'x<y]]>z', b: 'ok' } },
      options: { xmldec: { version: '1.1', encoding: 'ISO-8859-1', standalone: false }, cdata: true, renderOpts: { pretty: false }, doctype: { sysID: 'd.dtd' } },
    });
    assert.equal(cdata.payload, '<?xml version="1.1" encoding="ISO-8859-1" standalone="no"?><!DOCTYPE a SYSTEM "d.dtd"><a><![CDATA[x<y]]]]><![CDATA[>z]]><b>ok</b></a>');
    const empty = await through({
      _msgid: 'b4', payload: { a: { b: '' } },
      options: { xmldec: { version: '1.0' }, renderOpts: { pretty: true, allowEmpty: true, spaceBeforeSlash: true }, doctype: { pubID: 'p', sysID: 's' } },
    });
    assert.equal(empty.payload, '<?xml version="1.0" ?>\n<!DOCTYPE a PUBLIC "p" "s" >\n<a>\n  <b></b>\n</a>');
    const text = await through({ _msgid: 'b5', payload: { a: { _: 't', b: ['u', 'v'], c: { d: '' } } }, options: { renderOpts: { pretty: true, dontPrettyTextNodes: true, offset: 1 } } });
    assert.equal(text.payload, `  ${DECL}\n  <a>t<b>u</b><b>v</b><c><d/></c></a>`);
    const keys = await through({ _msgid: 'b6', payload: { a: { A: { k: 'v' }, C: 'text' } }, options: { attrkey: 'A', charkey: 'C', renderOpts: { pretty: false } } });
    assert.equal(keys.payload, `${DECL}<a k="v">text</a>`);
  });

  test('what xmlbuilder refuses is an error: bad names, versions and missing text', async () => {
    const cases: [unknown, unknown, string][] = [
      [{ 'bad name': 1 }, {}, 'Invalid character in name'],
      [[{ a: 1 }], undefined, 'Invalid character in name'],
      [{ a: 1 }, { xmldec: { version: '2.0' } }, 'Invalid version number: 2.0'],
      [{ a: { _: null } }, {}, 'Missing element text. parent: <a>'],
    ];
    for (const [i, [payload, options, message]] of cases.entries()) {
      const msg = await through(options === undefined ? { _msgid: `e${i}`, payload } : { _msgid: `e${i}`, payload, options });
      assert.equal(msg.error?.message, `Error: ${message}`);
    }
  });

  test('malformed XML is reported to catch nodes', async () => {
    const err = await through({ _msgid: 'bad', payload: '<a><b></a>' });
    assert.equal(err._msgid, 'bad');
    assert.match(err.error.message, /Expected closing tag 'b'/);
  });
});
