import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../helpers/server.js';
import { type Conf, flowSuite } from './flow.js';

const node = (id: string, type: string, z: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({
  id, type, z, name: id, x: 100, y: 100, wires, ...extra,
});
const fn = (id: string, func: string, extra: Conf = {}) => node(id, 'function', 't1', { func, outputs: 1, ...extra }, [[`cap-${id}`]]);
const cap = (id: string, z = 't1') => node(id, 'test-capture', z);
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

/** Code built at run time, which a guarded context compiles through the instrumenter. */
const BUILDS = [
  'const gen = (function* () {}).constructor("yield 1");',
  'const local = 4;',
  'msg.payload = [new Function("a", "b", "return a + b")(2, 3), Function("return this")() === globalThis, eval("1 + 2"),',
  '  (() => {}) instanceof Function, Function.prototype.constructor === Function,',
  '  await (async () => {}).constructor("return 7")(), gen().next().value, eval("typeof local")];',
  'try { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); } catch (e) { msg.payload.push(e.name); }',
  'return msg;',
].join('\n');

/** Whether the code the node runs was instrumented: a function's source shows the inserted check. */
const SEES_CHECKS = 'const probe = () => 1;\nmsg.payload = String(probe) !== "() => 1";\nreturn msg;';

const SPINS: Record<string, string> = {
  'spin-while': 'if (msg.payload === "spin") { while (true) {} }\nmsg.payload = "ok";\nreturn msg;',
  'spin-for': 'for (;;);',
  'spin-do': 'do {} while (true)',
  'spin-callback': '[1].forEach(function f(n) { while (true) {} });',
  'spin-timer': 'setTimeout(() => { while (true) {} }, 1);\nreturn null;',
  'spin-await': 'await new Promise((r) => setTimeout(r, 5));\nwhile (true) {}',
  'spin-forged': '__g = { n: -1e9, check() {} }; __guard__ = __g; __scope__ = __g; globalThis.check = null;\nwhile (true) {}',
};

describe('function node time limit', () => {
  const flows: Conf[] = [
    { id: 't1', type: 'tab', label: 'functions' },
    { id: 't2', type: 'tab', label: 'elsewhere' },
    ...Object.entries(SPINS).map(([id, func]) => fn(id, func, id === 'spin-while' ? { timeout: 0.2 } : {})),
    node('catch', 'catch', 't1', { scope: Object.keys(SPINS), uncaught: false }, [['cap-catch']]),
    fn('names', 'msg.payload = [typeof __scope__, typeof __guard__, typeof __g];\nreturn msg;'),
    fn('sees-checks', SEES_CHECKS),
    fn('builds', BUILDS),
    ...['cap-catch', ...Object.keys(SPINS).map((id) => `cap-${id}`), 'cap-names', 'cap-sees-checks', 'cap-builds'].map((id) => cap(id)),
    node('tick', 'inject', 't2', { props: [{ p: 'payload', v: 'tick', vt: 'str' }], repeat: '0.05', once: false }, [['cap-tick']]),
    cap('cap-tick', 't2'),
    node('in-alive', 'http in', 't2', { method: 'get', url: '/alive' }, [['fn-alive']]),
    node('fn-alive', 'function', 't2', { func: 'msg.payload = "alive";\nreturn msg;', outputs: 1 }, [['out-alive']]),
    node('out-alive', 'http response', 't2', { statusCode: '', headers: {} }),
  ];
  const t = flowSuite(() => flows, { globalFunctionTimeout: 0.3 });
  const { receive } = t;

  test('endless loops in the body, callbacks, timers and after await are stopped and reach the catch node', async () => {
    await t.capture.waitFor('cap-tick', 2);
    for (const id of Object.keys(SPINS)) receive(id, { _msgid: `m-${id}`, payload: 'spin' });
    const caught = await t.capture.waitFor('cap-catch', Object.keys(SPINS).length, 20_000);
    const bySource = new Map(caught.map((m) => [m.error.source.id, m]));
    for (const id of Object.keys(SPINS)) {
      // The error names what sets the limit, so a user whose code needs longer knows what to raise.
      const limit = id === 'spin-while' ? "200 ms: raise the node's timeout (0.2 s, Setup tab)" : '300 ms: raise globalFunctionTimeout (0.3 s, in the settings file) or give the node a timeout (Setup tab)';
      assert.equal(bySource.get(id)?.error.message, `RangeError: Function node ${id} ran longer than ${limit} if its work needs longer`, id);
    }
    assert.equal(bySource.get('spin-await')?._msgid, 'm-spin-await');
    for (const id of Object.keys(SPINS)) assert.deepEqual(t.capture.of(`cap-${id}`), [], id);
  });

  test('the node keeps working and other flows keep serving', async () => {
    receive('spin-while', { _msgid: 'after', payload: 'fine' });
    assert.deepEqual(plain(await t.capture.waitFor('cap-spin-while')), [{ _msgid: 'after', payload: 'ok' }]);
    const ticks = t.capture.of('cap-tick').length;
    await t.capture.waitFor('cap-tick', ticks + 2);
    const r = await request(t.server.at('alive'));
    assert.equal(r.status, 200);
    assert.equal(r.text, 'alive');
  });

  test('user code sees none of the generated names, and its code is instrumented', async () => {
    receive('names', { _msgid: 'n' });
    assert.deepEqual(plain(await t.capture.waitFor('cap-names')), [{ _msgid: 'n', payload: ['undefined', 'undefined', 'undefined'] }]);
    receive('sees-checks', { _msgid: 's' });
    assert.deepEqual(plain(await t.capture.waitFor('cap-sees-checks')), [{ _msgid: 's', payload: true }]);
  });

  test('code built at run time works as JavaScript (eval in the global scope); Atomics.wait throws', async () => {
    receive('builds', { _msgid: 'b' });
    const [built] = plain(await t.capture.waitFor('cap-builds'));
    assert.deepEqual(built.payload, [5, true, 3, true, true, 7, 1, 'undefined', 'TypeError']);
  });
});

describe('function node without a time limit', () => {
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'x' },
    fn('sees-checks', SEES_CHECKS),
    fn('builds', BUILDS),
    fn('own-limit', 'while (true) {}', { timeout: 0.1 }),
    node('catch', 'catch', 't1', { scope: ['own-limit'], uncaught: false }, [['cap-catch']]),
    cap('cap-sees-checks'),
    cap('cap-builds'),
    cap('cap-own-limit'),
    cap('cap-catch'),
  ], { globalFunctionTimeout: 0 });

  test('globalFunctionTimeout 0 leaves code uninstrumented; a node timeout still applies', async () => {
    t.receive('sees-checks', { _msgid: 's' });
    assert.deepEqual(plain(await t.capture.waitFor('cap-sees-checks')), [{ _msgid: 's', payload: false }]);
    t.receive('own-limit', { _msgid: 'o' });
    const [caught] = await t.capture.waitFor('cap-catch', 1, 10_000);
    assert.equal(caught.error.message, "RangeError: Function node own-limit ran longer than 100 ms: raise the node's timeout (0.1 s, Setup tab) if its work needs longer");
  });

  test('without a limit, eval and the constructors are JavaScript\'s own (a direct eval sees local variables)', async () => {
    t.receive('builds', { _msgid: 'b' });
    const [built] = plain(await t.capture.waitFor('cap-builds'));
    assert.deepEqual(built.payload, [5, true, 3, true, true, 7, 1, 'number', 'TypeError']);
  });
});

describe("Node-RED's functionTimeout: the editor's default for new nodes, not a bound", () => {
  // A Node-RED settings file's `functionTimeout: 5` means 5 seconds for nodes added in the editor;
  // it once bounded every function node to 5 ms here.
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'x' },
    fn('busy', 'const end = Date.now() + 50;\nwhile (Date.now() < end) {}\nmsg.payload = "done";\nreturn msg;'),
    cap('cap-busy'),
  ], { functionTimeout: 5 });

  test('GET /settings gives the editor 5 (seconds), and code running longer than 5 ms finishes', async () => {
    const settings = await request(t.server.at('settings'));
    assert.equal(settings.body.functionTimeout, 5);
    t.receive('busy', { _msgid: 'b' });
    assert.deepEqual(plain(await t.capture.waitFor('cap-busy')), [{ _msgid: 'b', payload: 'done' }]);
  });
});
