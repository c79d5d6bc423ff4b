import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { type Conf, flowSuite } from './flow.js';

const node = (id: string, type: string, z: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({
  id, type, z, name: id, x: 100, y: 100, wires, ...extra,
});
const fn = (id: string, func: string, z = 't1') => node(id, 'function', z, { func, outputs: 1 }, [[`cap-${id}`]]);
const cap = (id: string, z = 't1') => node(id, 'test-capture', z);
/** Values built inside the sandbox have the sandbox's prototypes; compare them as data. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

describe("function node's node.linkcall()", () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'callers' },
    { id: 't2', type: 'tab', label: 'services' },
    // a service on another tab: answers with its input's payload marked, and marks the input it was given
    node('svc-in', 'link in', 't2', { name: 'service', links: [] }, [['svc-fn']]),
    node('svc-fn', 'function', 't2', { func: 'msg.payload = "answer:" + msg.payload;\nreturn msg;', outputs: 1 }, [['svc-out']]),
    node('svc-out', 'link out', 't2', { mode: 'return', links: [] }),
    // a link in that never answers
    node('sink-in', 'link in', 't2', { name: 'sink', links: [] }, [['cap-sink']]),
    cap('cap-sink', 't2'),
    fn('by-name', 'const r = await node.linkcall("service", msg);\nreturn { payload: [r.payload, msg.payload, r._linkSource === undefined] };'),
    fn('by-id', 'const r = await node.linkcall("svc-in", { payload: "id" });\nreturn { payload: r.payload };'),
    fn('no-clone', 'const m = { payload: "mine" };\nconst r = await node.linkcall("service", m, { clone: false });\nreturn { payload: [r === m, m.payload] };'),
    fn('missing', 'try { await node.linkcall("nowhere", msg); } catch (e) { return { payload: e.message }; }'),
    fn('bad-args', [
      'const out = [];',
      'for (const args of [[5, msg], ["", msg], ["service", "text"], ["service", null], ["service", msg, "fast"]]) {',
      '  try { await node.linkcall(...args); out.push("resolved"); } catch (e) { out.push(e.message); }',
      '}',
      'return { payload: out };',
    ].join('\n')),
    fn('timeout', 'const started = Date.now();\ntry { await node.linkcall("sink", msg, { timeout: 50 }); } catch (e) { return { payload: [e.message, Date.now() - started] }; }'),
    fn('uncaught', 'await node.linkcall("nowhere", msg);\nreturn msg;'),
    node('catch-uncaught', 'catch', 't1', { scope: ['uncaught'], uncaught: false }, [['cap-caught']]),
    cap('cap-by-name'), cap('cap-by-id'), cap('cap-no-clone'), cap('cap-missing'), cap('cap-bad-args'), cap('cap-timeout'), cap('cap-uncaught'), cap('cap-caught'),
  ]);

  test('calls a link in by name and resolves with what its return-mode link out sends back, leaving the caller\'s message as it was', async () => {
    t.receive('by-name', { payload: 'question' });
    const [out] = await t.capture.waitFor('cap-by-name');
    assert.deepEqual(plain(out.payload), ['answer:question', 'question', true]);
  });

  test('calls a link in by its id', async () => {
    t.receive('by-id', { payload: 'go' });
    const [out] = await t.capture.waitFor('cap-by-id');
    assert.equal(out.payload, 'answer:id');
  });

  test('with clone: false the called flow gets the caller\'s own message', async () => {
    t.receive('no-clone', { payload: 'go' });
    const [out] = await t.capture.waitFor('cap-no-clone');
    assert.deepEqual(plain(out.payload), [true, 'answer:mine']);
  });

  test('a missing target is a rejection the code catches', async () => {
    t.receive('missing', { payload: 'go' });
    const [out] = await t.capture.waitFor('cap-missing');
    assert.equal(out.payload, "target link-in node 'nowhere' not found");
  });

  test('a target that is not a name, a message that is not an object and options that are not an object are rejections', async () => {
    t.receive('bad-args', { payload: 'go' });
    const [out] = await t.capture.waitFor('cap-bad-args');
    assert.deepEqual(plain(out.payload), [
      'Error link call target parameter is not valid, expected a string',
      'Error link call target parameter is not valid, expected a string',
      'Error link call msg parameter is not valid, expected an object',
      'Error link call msg parameter is not valid, expected an object',
      'Error link call options parameter is not valid, expected an object',
    ]);
  });

  test('a call without an answer rejects with "timeout" after its timeout', async () => {
    t.receive('timeout', { payload: 'hello?' });
    const [out] = await t.capture.waitFor('cap-timeout');
    assert.equal(out.payload[0], 'timeout');
    assert.ok(out.payload[1] >= 45, `waited ${out.payload[1]} ms`);
    assert.equal(t.capture.of('cap-sink').length, 1, 'the link in got the call');
  });

  test('an uncaught rejection fails the message, as a throw does, for catch nodes', async () => {
    t.receive('uncaught', { payload: 'lost' });
    const [caught] = await t.capture.waitFor('cap-caught');
    assert.equal(caught.payload, 'lost');
    assert.equal(caught.error.source.id, 'uncaught');
    assert.match(caught.error.message, /target link-in node 'nowhere' not found/);
    assert.equal(t.capture.of('cap-uncaught').length, 0);
  });
});
