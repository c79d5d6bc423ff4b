import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

describe('template node', () => {
  const t = flowSuite((server) => {
    const context = server.instance.runtime.services.context;
    context.getFlowContext('t1').set('name', 'Flo');
    context.getGlobalContext().set('greeting', 'Hi');
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'template', env: [{ name: 'WHO', value: 'env-who', type: 'str' }] },
      node('mustache', 'template', { template: '{{global.greeting}} {{payload}} ({{topic}}) from {{flow.name}} as {{env.WHO}}{{missing}}.', syntax: 'mustache', field: 'payload', fieldType: 'msg', output: 'str' }, [['cap-mustache']]),
      node('escape', 'template', { template: '{{payload}} {{{payload}}}{{#list}}[{{.}}]{{/list}}', field: 'out' }, [['cap-escape']]),
      node('json', 'template', { template: '{"text": "{{payload}}", "n": {{n}}}', output: 'json' }, [['cap-json']]),
      node('json-section', 'template', { template: '{"top": "{{s}}", "inner": {{#obj}}"{{s}}"{{/obj}}}', output: 'json' }, [['cap-json-section']]),
      node('yaml', 'template', { template: 'name: {{payload}}\nitems:\n  - 1\n  - 2', output: 'yaml' }, [['cap-yaml']]),
      node('plain', 'template', { template: 'raw {{payload}}', syntax: 'plain' }, [['cap-plain']]),
      node('from-msg', 'template', { template: '' }, [['cap-from-msg']]),
      node('to-flow', 'template', { template: 'stored {{payload}}', field: 'rendered', fieldType: 'flow' }, [['cap-to-flow']]),
      node('bad-json', 'template', { template: '{oops {{payload}}', output: 'json' }),
      node('catch', 'catch', { scope: ['bad-json'], uncaught: false }, [['cap-catch']]),
      ...['cap-mustache', 'cap-escape', 'cap-json', 'cap-json-section', 'cap-yaml', 'cap-plain', 'cap-from-msg', 'cap-to-flow', 'cap-catch'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('mustache reads the message, flow and global context and env', async () => {
    receive('mustache', { _msgid: 'm1', payload: 'world', topic: 't' });
    assert.deepEqual(await t.capture.waitFor('cap-mustache'), [{ _msgid: 'm1', payload: 'Hi world (t) from Flo as env-who.', topic: 't' }]);
  });

  test('double braces escape HTML, triple braces do not; sections iterate', async () => {
    receive('escape', { _msgid: 'e1', payload: '<b>', list: [1, 2] });
    const [msg] = await t.capture.waitFor('cap-escape');
    assert.equal(msg.out, '&lt;b&gt; <b>[1][2]');
    assert.equal(msg.payload, '<b>');
  });

  test('JSON output escapes control characters and is parsed', async () => {
    receive('json', { _msgid: 'j1', payload: 'line1\nline2\t\\', n: 5 });
    const [msg] = await t.capture.waitFor('cap-json');
    assert.deepEqual(msg.payload, { text: 'line1\nline2\t\\', n: 5 });
  });

  test('JSON output escapes only top-level values: inside a section a value goes in as it is', async () => {
    receive('json-section', { _msgid: 'j2', s: 'a\\b', obj: { s: 'a\\b' } });
    const [msg] = await t.capture.waitFor('cap-json-section');
    assert.deepEqual(msg.payload, { top: 'a\\b', inner: 'a\b' });
  });

  test('YAML output is parsed', async () => {
    receive('yaml', { _msgid: 'y1', payload: 'box' });
    assert.deepEqual(await t.capture.waitFor('cap-yaml'), [{ _msgid: 'y1', payload: { name: 'box', items: [1, 2] } }]);
  });

  test('plain syntax copies the template as it is', async () => {
    receive('plain', { _msgid: 'p1', payload: 'x' });
    assert.deepEqual(await t.capture.waitFor('cap-plain'), [{ _msgid: 'p1', payload: 'raw {{payload}}' }]);
  });

  test('msg.template is used when the node has no template', async () => {
    receive('from-msg', { _msgid: 'f1', payload: 'v', template: 'got {{payload}} {{flow.name}}' });
    assert.deepEqual(await t.capture.waitFor('cap-from-msg'), [{ _msgid: 'f1', payload: 'got v Flo', template: 'got {{payload}} {{flow.name}}' }]);
  });

  test('output can go to flow context; the message passes unchanged', async () => {
    receive('to-flow', { _msgid: 'c1', payload: 'it' });
    assert.deepEqual(await t.capture.waitFor('cap-to-flow'), [{ _msgid: 'c1', payload: 'it' }]);
    assert.equal(t.server.instance.runtime.services.context.getFlowContext('t1').get('rendered'), 'stored it');
  });

  test('output that is not valid JSON is an error a catch node receives', async () => {
    receive('bad-json', { _msgid: 'b1', payload: 'x' });
    const [msg] = await t.capture.waitFor('cap-catch');
    assert.equal(msg._msgid, 'b1');
    assert.equal(msg.error.source.id, 'bad-json');
    assert.match(msg.error.message, /JSON/);
  });
});
