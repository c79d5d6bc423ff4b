import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
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

  test('malformed XML is reported to catch nodes', async () => {
    receive('x', { _msgid: 'bad', payload: '<a><b></a>' });
    const [err] = await t.capture.waitFor('errors');
    assert.equal(err._msgid, 'bad');
    assert.match(err.error.message, /Expected closing tag 'b'/);
  });
});
