import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../helpers/server.js';
import type { Capture } from '../helpers/capture.js';
import type { Msg } from '../../src/runtime/flows/node.js';
import { type Conf, flowSuite } from './flow.js';
import { deploy } from '../helpers/deploy.js';

const node = (id: string, type: string, z: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({
  id, type, z, name: id, x: 100, y: 100, wires, ...extra,
});
const fn = (id: string, func: string, wires: string[][] = [[`cap-${id}`]], extra: Conf = {}) => node(id, 'function', 't1', { func, outputs: wires.length, ...extra }, wires);
const cap = (id: string, z = 't1') => node(id, 'test-capture', z);

/** Values built inside the sandbox have the sandbox's prototypes; compare them as data. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));
const waitPlain = async (capture: Capture, name: string, count = 1) => plain(await capture.waitFor(name, count));

describe('function node', () => {
  const flows: Conf[] = [
    { id: 't1', type: 'tab', label: 'functions', env: [{ name: 'GREETING', value: 'hello', type: 'str' }] },
    { id: 't2', type: 'tab', label: 'elsewhere' },
    fn('multi', 'return [{ payload: msg.payload * 2 }, [{ payload: "a" }, { payload: "b" }]];', [['cap-multi-1'], ['cap-multi-2']]),
    fn('skip', 'return [null, msg];', [['cap-skip-1'], ['cap-skip-2']]),
    fn('later', 'setTimeout(() => { node.send({ payload: "later" }); node.done(); }, 20);\nreturn null;'),
    fn('await', 'await new Promise((r) => setTimeout(r, 5));\nmsg.payload = "awaited";\nreturn msg;'),
    fn('promise', 'return new Promise((resolve) => resolve({ payload: "resolved" }));'),
    fn('init', 'msg.payload = context.get("base") + msg.payload;\nreturn msg;', undefined, {
      initialize: 'await new Promise((r) => setTimeout(r, 20));\ncontext.set("base", 100);',
      finalize: 'global.set("finalized", node.id);',
    }),
    fn('throw', 'throw new TypeError("kaboom");'),
    node('catch-throw', 'catch', 't1', { scope: ['throw', 'loop', 'loop-default'], uncaught: false }, [['cap-catch']]),
    fn('sandbox', 'msg.payload = [typeof process, typeof require, typeof Buffer, typeof setTimeout, typeof RED.util.cloneMessage, typeof util.inspect, typeof console.log, env.get("GREETING"), node.outputCount, node.path];\nreturn msg;'),
    fn('twin-a', 'msg.payload = node.id;\nreturn msg;'),
    fn('twin-b', 'msg.payload = node.id;\nreturn msg;'),
    fn('context', 'const n = (flow.get("n") || 0) + 1;\nflow.set("n", n);\nglobal.set("g", n);\nmsg.payload = [n, global.get("g")];\nreturn msg;'),
    fn('not-a-message', 'return 5;'),
    fn('loop', 'while (true) {}', undefined, { timeout: 0.2 }),
    fn('loop-default', 'for (;;) {}'),
    fn('done-comment', '// node.done() is called for us\nreturn msg;'),
    node('complete-done', 'complete', 't1', { scope: ['done-comment'] }, [['cap-complete']]),
    fn('falsy', 'if (msg.payload === 1) return false;\nif (msg.payload === 2) return [0, msg];\nreturn [[0]];', [['cap-falsy-1'], ['cap-falsy-2']]),
    fn('reference', 'msg.payload = 1;\n  missing.value = 2;\nreturn msg;'),
    fn('nested-reference', 'function inner() { return missing; }\nreturn inner();'),
    fn('throw-string', 'throw "plain text";'),
    fn('throw-object', 'throw { code: 42 };'),
    fn('listener', 'node.on("input", () => {});\nreturn msg;'),
    node('catch-errors', 'catch', 't1', { scope: ['reference', 'nested-reference', 'throw-string', 'throw-object', 'listener'], uncaught: false }, [['cap-errors']]),
    node('tick', 'inject', 't2', { props: [{ p: 'payload', v: 'tick', vt: 'str' }], repeat: '0.05', once: false }, [['cap-tick']]),
    ...['cap-multi-1', 'cap-multi-2', 'cap-skip-1', 'cap-skip-2', 'cap-later', 'cap-await', 'cap-promise', 'cap-init', 'cap-catch', 'cap-sandbox',
      'cap-twin-a', 'cap-twin-b', 'cap-context', 'cap-not-a-message', 'cap-loop', 'cap-loop-default', 'cap-complete',
      'cap-falsy-1', 'cap-falsy-2', 'cap-errors'].map((id) => cap(id)),
    cap('cap-tick', 't2'),
  ];
  const t = flowSuite(() => flows, { globalFunctionTimeout: 0.3 });
  const { receive } = t;

  test('returns one message per output, and arrays of messages, with the input message id', async () => {
    receive('multi', { _msgid: 'm-multi', payload: 21 });
    assert.deepEqual(await waitPlain(t.capture, 'cap-multi-1'), [{ _msgid: 'm-multi', payload: 42 }]);
    assert.deepEqual(await waitPlain(t.capture, 'cap-multi-2', 2), [{ _msgid: 'm-multi', payload: 'a' }, { _msgid: 'm-multi', payload: 'b' }]);
    receive('skip', { _msgid: 'm-skip', payload: 1 });
    assert.deepEqual(await waitPlain(t.capture, 'cap-skip-2'), [{ _msgid: 'm-skip', payload: 1 }]);
    assert.deepEqual(t.capture.of('cap-skip-1'), []);
  });

  test('node.send and node.done work asynchronously; await and returned promises work', async () => {
    receive('later', { _msgid: 'm-later' });
    assert.deepEqual(await waitPlain(t.capture, 'cap-later'), [{ _msgid: 'm-later', payload: 'later' }]);
    receive('await', { _msgid: 'm-await', payload: 0 });
    assert.deepEqual(await waitPlain(t.capture, 'cap-await'), [{ _msgid: 'm-await', payload: 'awaited' }]);
    receive('promise', { _msgid: 'm-promise' });
    assert.deepEqual(await waitPlain(t.capture, 'cap-promise'), [{ _msgid: 'm-promise', payload: 'resolved' }]);
  });

  test('initialize runs before the first message is handled', async () => {
    receive('init', { _msgid: 'm-init', payload: 5 });
    assert.deepEqual(await waitPlain(t.capture, 'cap-init'), [{ _msgid: 'm-init', payload: 105 }]);
  });

  test('a thrown error reaches the catch node with the message', async () => {
    receive('throw', { _msgid: 'm-throw', payload: 'x' });
    const [caught] = await t.capture.waitFor('cap-catch');
    assert.equal(caught._msgid, 'm-throw');
    assert.equal(caught.payload, 'x');
    assert.equal(caught.error.message, 'TypeError: kaboom');
    assert.deepEqual(caught.error.source, { id: 'throw', type: 'function', name: 'throw', count: 1 });
  });

  test('the sandbox hides process and require and offers the Node-RED API', async () => {
    receive('sandbox', { _msgid: 'm-sandbox' });
    const [msg] = await waitPlain(t.capture, 'cap-sandbox');
    assert.deepEqual(msg.payload, ['undefined', 'undefined', 'function', 'function', 'function', 'function', 'function', 'hello', 1, 't1/sandbox']);
  });

  test('nodes with identical code keep their own node object', async () => {
    receive('twin-a', { _msgid: 'a' });
    receive('twin-b', { _msgid: 'b' });
    assert.deepEqual(await waitPlain(t.capture, 'cap-twin-a'), [{ _msgid: 'a', payload: 'twin-a' }]);
    assert.deepEqual(await waitPlain(t.capture, 'cap-twin-b'), [{ _msgid: 'b', payload: 'twin-b' }]);
  });

  test('flow and global context are reachable', async () => {
    receive('context', { _msgid: 'c1' });
    receive('context', { _msgid: 'c2' });
    const got = await waitPlain(t.capture, 'cap-context', 2);
    assert.deepEqual(got.map((m: Msg) => m.payload), [[1, 1], [2, 2]]);
  });

  test('returning a non-message is reported and sends nothing', async () => {
    receive('not-a-message', { _msgid: 'n' });
    await eventually(() => t.server.logs.some((l) => l.includes('Function tried to send a message of type number')));
    assert.deepEqual(t.capture.of('cap-not-a-message'), []);
  });

  test('node.done() mentioned only in a comment leaves completion to the node', async () => {
    receive('done-comment', { _msgid: 'm-done', payload: 'x' });
    const source = { id: 'done-comment', type: 'function', name: 'done-comment' };
    assert.deepEqual(await waitPlain(t.capture, 'cap-complete'), [{ _msgid: 'm-done', payload: 'x', complete: { source } }]);
  });

  test('a falsy value in an output slot sends nothing there; inside a list it is an error', async () => {
    receive('falsy', { _msgid: 'f1', payload: 1 });
    receive('falsy', { _msgid: 'f2', payload: 2 });
    assert.deepEqual(await waitPlain(t.capture, 'cap-falsy-2'), [{ _msgid: 'f2', payload: 2 }]);
    receive('falsy', { _msgid: 'f3', payload: 3 });
    const fromFalsy = () => t.server.logs.filter((l) => l.includes('"name":"falsy"'));
    await eventually(() => fromFalsy().length > 0);
    assert.equal(fromFalsy().length, 1);
    assert.ok(fromFalsy()[0].includes('"msg":"Function tried to send a message of type number"'));
    assert.deepEqual(t.capture.of('cap-falsy-1'), []);
  });

  test('errors reach catch nodes as Node-RED words them', async () => {
    const cases: [string, string][] = [
      ['reference', 'ReferenceError: missing is not defined (line 2, col 3)'],
      ['nested-reference', 'ReferenceError: missing is not defined'],
      ['throw-string', 'plain text'],
      ['throw-object', '{"code":42}'],
      ['listener', "Error: Cannot add listener to 'input' event within Function"],
    ];
    for (const [id] of cases) receive(id, { _msgid: `e-${id}` });
    const caught = await t.capture.waitFor('cap-errors', cases.length);
    const byId = new Map(caught.map((m) => [m._msgid, m.error.message]));
    for (const [id, message] of cases) assert.equal(byId.get(`e-${id}`), message, id);
  });

  test('an infinite loop is stopped (node timeout and globalFunctionTimeout) while other flows keep running', async () => {
    await t.capture.waitFor('cap-tick', 2);
    receive('loop', { _msgid: 'm-loop' });
    receive('loop-default', { _msgid: 'm-loop-default' });
    const caught = await t.capture.waitFor('cap-catch', 3, 10_000);
    const byId = new Map(caught.map((m) => [m._msgid, m.error]));
    assert.match(byId.get('m-loop').message, /^RangeError: Function node loop ran longer than 200 ms: raise the node's timeout/);
    assert.match(byId.get('m-loop-default').message, /^RangeError: Function node loop-default ran longer than 300 ms: raise globalFunctionTimeout/);
    const ticks = t.capture.of('cap-tick').length;
    await t.capture.waitFor('cap-tick', ticks + 2);
    receive('multi', { _msgid: 'after-loop', payload: 1 });
    await t.capture.waitFor('cap-multi-1', 2);
    assert.equal(t.capture.of('cap-loop').length + t.capture.of('cap-loop-default').length, 0);
  });

  test('finalize runs when the node is removed; timers stop', async () => {
    await deploy(t.server, flows.filter((n) => n.id !== 'init' && n.id !== 'tick'));
    const global = t.server.instance.runtime.services.context.getGlobalContext();
    assert.equal(global.get('finalized'), 'init');
  });
});

describe('function node external modules', () => {
  describe('with functionExternalModules false', () => {
    const t = flowSuite(() => [
      { id: 't1', type: 'tab', label: 'x' },
      fn('libs', 'return msg;', [[]], { libs: [{ var: 'os', module: 'os' }] }),
    ], { functionExternalModules: false });

    test('libs are refused when functionExternalModules is false', async () => {
      await eventually(() => t.server.logs.some((l) => l.includes('Failed to start node') && l.includes('Function node not allowed to load external modules')));
      assert.equal(t.server.instance.runtime.services.nodes.get('libs'), undefined);
    });
  });

  describe('by default', () => {
    const t = flowSuite(() => [
      { id: 't1', type: 'tab', label: 'x' },
      fn('libs', 'msg.payload = typeof os.hostname;\nreturn msg;', [['cap-libs']], { libs: [{ var: 'os', module: 'os' }] }),
      cap('cap-libs'),
    ]);

    test('libs are imported by default and bound to their variable before the first message', async () => {
      t.receive('libs', { _msgid: 'l' });
      assert.deepEqual(await waitPlain(t.capture, 'cap-libs'), [{ _msgid: 'l', payload: 'function' }]);
    });
  });

  describe('without installs', () => {
    const t = flowSuite(() => [
      { id: 't1', type: 'tab', label: 'x' },
      fn('broken', 'return msg;', [['cap-broken']], { libs: [{ var: 'nope', module: 'runnel-no-such-module' }] }),
      cap('cap-broken'),
    ], { externalModules: { modules: { allowInstall: false } } });

    test('a lib that cannot be loaded is reported and the node handles no messages', async () => {
      t.receive('broken', { _msgid: 'b' });
      await eventually(() => t.server.logs.some((l) => l.includes('"msg":"Function node failed to load external modules"')));
      assert.ok(t.server.logs.some((l) => l.includes('"msg":"Failed to load module runnel-no-such-module: Error')));
      assert.deepEqual(t.capture.of('cap-broken'), []);
    });
  });

  describe('with functionAllowHostAccess', () => {
    const t = flowSuite(() => [
      { id: 't1', type: 'tab', label: 'x' },
      fn('host', 'msg.payload = [typeof process.pid, typeof require("node:path").join];\nreturn msg;', [['cap-host']]),
      cap('cap-host'),
    ], { functionAllowHostAccess: true });

    test('functionAllowHostAccess exposes process and require', async () => {
      t.receive('host', { _msgid: 'h' });
      assert.deepEqual(await waitPlain(t.capture, 'cap-host'), [{ _msgid: 'h', payload: ['number', 'function'] }]);
    });
  });
});
