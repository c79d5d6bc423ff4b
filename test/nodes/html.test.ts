import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite, node } from './flow.js';

const PAGE = '<div><ul id="l"><li class="x" data-n="1">One <b>bold</b></li><li>Two<br></li></ul></div>';

describe('html node', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'html' },
      node('inner', 'html', { tag: 'li', ret: 'html', as: 'single' }, [['inner-out']]),
      node('text', 'html', { tag: '', ret: 'text', as: 'multi', outproperty: 'found' }, [['text-out']]),
      node('attr', 'html', { tag: 'li.x', ret: 'attr', as: 'single', property: 'page' }, [['attr-out']]),
      node('compl', 'html', { tag: '#l > li', ret: 'compl', as: 'single', chr: 'inner' }, [['compl-out']]),
      node('doc', 'html', { tag: 'title', ret: 'text', as: 'single' }, [['doc-out']]),
      ...['inner-out', 'text-out', 'attr-out', 'compl-out', 'doc-out'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  test('inner markup of every match, as one array', async () => {
    receive('inner', { _msgid: 'i', payload: PAGE });
    assert.deepEqual(await t.capture.waitFor('inner-out'), [{ _msgid: 'i', payload: ['One <b>bold</b>', 'Two<br/>'] }]);
  });

  test('text of each match as its own message with parts, selector from msg.select', async () => {
    receive('text', { _msgid: 't', payload: PAGE, select: 'li' });
    assert.deepEqual(await t.capture.waitFor('text-out', 2), [
      { _msgid: 't', payload: PAGE, select: 'li', found: 'One bold', parts: { id: 't', index: 0, count: 2, type: 'string', ch: '' } },
      { _msgid: 't', payload: PAGE, select: 'li', found: 'Two', parts: { id: 't', index: 1, count: 2, type: 'string', ch: '' } },
    ]);
  });

  test('attributes, and attributes with the inner markup under the chr key', async () => {
    receive('attr', { _msgid: 'a', page: PAGE });
    assert.deepEqual(await t.capture.waitFor('attr-out'), [{ _msgid: 'a', page: [{ class: 'x', 'data-n': '1' }] }]);
    receive('compl', { _msgid: 'c', payload: PAGE });
    assert.deepEqual(await t.capture.waitFor('compl-out'), [{ _msgid: 'c', payload: [{ inner: 'One <b>bold</b>', class: 'x', 'data-n': '1' }, { inner: 'Two<br>' }] }]);
  });

  test('input is a whole document: title and body can be selected', async () => {
    receive('doc', { _msgid: 'd', payload: '<html><head><title>T</title></head><body><p>x</p></body></html>' });
    assert.deepEqual(await t.capture.waitFor('doc-out'), [{ _msgid: 'd', payload: ['T'] }]);
  });
});
