import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite } from './flow.js';
import { createRedApi } from '../../src/runtime/red-api/red-api.js';

const node = (id: string, type: string, z: string, extra: Conf = {}, wires: string[] = []): Conf => ({
  id, type, z, x: 100, y: 100, wires: [wires], ...extra,
});
const cap = (id: string, z: string, wires: string[] = []) => node(id, 'test-capture', z, { name: id, passthrough: wires.length > 0 }, wires);

describe('link nodes', () => {
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'callers' },
      { id: 't2', type: 'tab', label: 'services' },
      // link out to two link-in nodes, one on each tab
      node('lo1', 'link out', 't1', { mode: 'link', links: ['li2', 'li3'] }),
      node('li2', 'link in', 't2', { links: ['lo1'] }, ['linked-2']),
      node('li3', 'link in', 't1', { links: ['lo1'] }, ['linked-3']),
      cap('linked-2', 't2'),
      cap('linked-3', 't1'),
      // a service on t2 that answers through a return-mode link out
      node('li-svc', 'link in', 't2', { name: 'service', links: [] }, ['svc-seen']),
      cap('svc-seen', 't2', ['lo-ret']),
      node('lo-ret', 'link out', 't2', { mode: 'return', links: [] }),
      node('lc1', 'link call', 't1', { links: ['li-svc'], linkType: 'static', timeout: '2' }, ['call-result']),
      cap('call-result', 't1'),
      node('lc-dyn', 'link call', 't1', { links: [], linkType: 'dynamic', timeout: '2' }, ['dyn-result']),
      cap('dyn-result', 't1'),
      // two link-in nodes of one name: a dynamic call prefers the one on its own tab
      node('twin-far', 'link in', 't2', { name: 'twin', links: [] }, ['twin-far-seen']),
      cap('twin-far-seen', 't2'),
      node('twin-near', 'link in', 't1', { name: 'twin', links: [] }, ['twin-near-seen']),
      cap('twin-near-seen', 't1', ['twin-ret']),
      node('twin-ret', 'link out', 't1', { mode: 'return', links: [] }),
      // a link in that never answers
      node('li-sink', 'link in', 't2', { links: [] }, ['sink']),
      cap('sink', 't2'),
      node('lc-timeout', 'link call', 't1', { links: ['li-sink'], linkType: 'static', timeout: '0.2' }, ['never']),
      cap('never', 't1'),
      node('catch-calls', 'catch', 't1', { scope: ['lc-timeout', 'lc-dyn'] }, ['caught']),
      cap('caught', 't1'),
    ];
    return flows;
  });
  const { receive } = t;

  test('link out delivers to every listed link in, across tabs, each with its own copy', async () => {
    receive('lo1', { _msgid: 'l1', payload: { n: 1 } });
    const [a] = await t.capture.waitFor('linked-2');
    const [b] = await t.capture.waitFor('linked-3');
    assert.deepEqual(a.payload, { n: 1 });
    assert.deepEqual(b.payload, { n: 1 });
    assert.equal(a._msgid, 'l1');
    assert.equal(b._msgid, 'l1');
    assert.notEqual(a.payload, b.payload, 'the second delivery is a clone');
  });

  test('link call sends to its target and a return-mode link out answers on the call node', async () => {
    receive('lc1', { _msgid: 'c1', payload: 'question' });
    const [seen] = await t.capture.waitFor('svc-seen');
    assert.equal(seen.payload, 'question');
    const [result] = await t.capture.waitFor('call-result');
    assert.equal(result._msgid, 'c1');
    assert.equal(result.payload, 'question');
    assert.equal(Object.hasOwn(result, '_linkSource'), false, 'the emptied call stack is removed');
  });

  test('a dynamic link call finds its target by name or by id from msg.target', async () => {
    receive('lc-dyn', { payload: 'by-name', target: 'service' });
    receive('lc-dyn', { payload: 'by-id', target: 'li-svc' });
    const results = await t.capture.waitFor('dyn-result', 2);
    assert.deepEqual(results.map((m) => m.payload).sort(), ['by-id', 'by-name']);
  });

  test('a dynamic link call by a shared name takes the link in on its own tab', async () => {
    receive('lc-dyn', { _msgid: 'tw', payload: 'twin', target: 'twin' });
    const [near] = await t.capture.waitFor('twin-near-seen');
    assert.equal(near.payload, 'twin');
    await t.capture.waitFor('dyn-result', 3);
    assert.deepEqual(t.capture.of('twin-far-seen'), []);
  });

  test('RED.nodes.linkcallTargets, as modules get it, finds running link in nodes by id and by name, and only link in nodes', () => {
    const runtime = t.server.instance.runtime;
    const RED = createRedApi(runtime, runtime.registry.addSet('test-helpers', 'linkcall-probe'));
    const targets = RED.nodes.linkcallTargets;
    const caller = RED.nodes.getNode('lc-dyn')!;
    assert.equal(targets.getTargetNode(caller, 'li-svc', false).id, 'li-svc');
    assert.equal(targets.getTargetNode(caller, 'service', true).id, 'li-svc');
    assert.equal(targets.getTargetNode(caller, 'twin', true).id, 'twin-near', 'a name on the caller\'s own flow first');
    assert.throws(() => targets.getTargetNode(caller, 'service', false), { message: "target link-in node 'service' not found" });
    assert.throws(() => targets.register(caller), { message: "linkcallTargets: node must be a 'link in' node" });
  });

  test('a dynamic link call to an unknown target is an error', async () => {
    receive('lc-dyn', { payload: 'lost', target: 'nowhere' });
    const [caught] = await t.capture.waitFor('caught');
    assert.equal(caught.payload, 'lost');
    assert.equal(caught.error.message, "Error: target link-in node 'nowhere' not found");
    assert.equal(caught.error.source.id, 'lc-dyn');
  });

  test('a link call without an answer times out with an error', async () => {
    receive('lc-timeout', { _msgid: 't1', payload: 'hello?' });
    await t.capture.waitFor('sink');
    const caught = await t.capture.waitFor('caught', 2, 3000);
    const timeout = caught[1];
    assert.equal(timeout.error.message, 'timeout');
    assert.equal(timeout.error.source.id, 'lc-timeout');
    assert.equal(timeout.payload, 'hello?');
    assert.equal(timeout._linkSource, undefined, 'the error carries the message as it entered the call');
    assert.equal(t.capture.of('never').length, 0);
  });
});
