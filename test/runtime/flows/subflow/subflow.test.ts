import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../../../helpers/server.js';
import { installCapture, type Capture } from '../../../helpers/capture.js';
import type { Msg } from '../../../../src/runtime/flows/node.js';
import { deploy } from '../../../helpers/deploy.js';

type Conf = Record<string, unknown>;
const at = { x: 100, y: 100 };
const cap = (id: string, z: string, wires: string[] = []): Conf => ({ id, type: 'test-capture', z, name: id, passthrough: true, ...at, wires: [wires] });
const fn = (id: string, z: string, func: string, wires: string[][]): Conf => ({ id, type: 'function', z, name: `fn ${id}`, func, outputs: wires.length, ...at, wires });
const instance = (id: string, template: string, z: string, wires: string[][], extra: Conf = {}): Conf => ({
  id, type: `subflow:${template}`, z, ...at, wires, ...extra,
});
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

/** Reports who it is and what it sees; payload "second" leaves on output 2. */
const REPORTER = `
const n = (context.get('n') || 0) + 1; context.set('n', n);
const f = (flow.get('f') || 0) + 1; flow.set('f', f);
node.status({ text: 'seen ' + msg.payload });
msg.payload = { in: msg.payload, greeting: env.get('GREETING'), count: env.get('COUNT'), sub: env.get('NR_SUBFLOW_NAME'),
  subId: env.get('NR_SUBFLOW_ID'), tab: env.get('NR_FLOW_NAME'), n, f, parent: flow.get('$parent.tabvar'), id: node.id };
return msg.payload.in === 'second' ? [null, msg] : [msg, null];`;

function flows(): Conf[] {
  return [
    { id: 't1', type: 'tab', label: 'main' },
    {
      id: 'sf1', type: 'subflow', name: 'reporter',
      in: [{ ...at, wires: [{ id: 'sf1-fn' }] }],
      out: [{ ...at, wires: [{ id: 'sf1-fn', port: 0 }] }, { ...at, wires: [{ id: 'sf1-fn', port: 1 }] }],
      env: [{ name: 'GREETING', type: 'str', value: 'hello' }, { name: 'COUNT', type: 'num', value: '3' }],
    },
    fn('sf1-fn', 'sf1', REPORTER, [[], []]),
    // A template holding an instance of sf1, with its own override.
    { id: 'sf2', type: 'subflow', name: 'wrapper', in: [{ ...at, wires: [{ id: 'sf2-inner' }] }], out: [{ ...at, wires: [{ id: 'sf2-inner', port: 0 }] }] },
    instance('sf2-inner', 'sf1', 'sf2', [[], []], { name: 'inner', env: [{ name: 'GREETING', type: 'str', value: 'nested' }] }),
    // Status port fed by an internal function.
    { id: 'sf3', type: 'subflow', name: 'busy', in: [{ ...at, wires: [{ id: 'sf3-fn' }] }], out: [], status: { ...at, wires: [{ id: 'sf3-fn', port: 0 }] } },
    fn('sf3-fn', 'sf3', 'return { payload: "busy " + msg.payload };', [[]]),
    // One template that throws, one that catches its own error by template id.
    { id: 'sf4', type: 'subflow', name: 'thrower', in: [{ ...at, wires: [{ id: 'sf4-fn' }] }], out: [] },
    fn('sf4-fn', 'sf4', 'throw new Error("inner boom");', [[]]),
    { id: 'sf5', type: 'subflow', name: 'self-catching', in: [{ ...at, wires: [{ id: 'sf5-fn' }] }], out: [{ ...at, wires: [{ id: 'sf5-catch', port: 0 }] }] },
    fn('sf5-fn', 'sf5', 'throw new Error("handled inside");', [[]]),
    { id: 'sf5-catch', type: 'catch', z: 'sf5', scope: ['sf5-fn'], ...at, wires: [[]] },
    // Input wired straight to the output.
    { id: 'sf6', type: 'subflow', name: 'passthrough', in: [{ ...at, wires: [{ id: 'sf6' }] }], out: [{ ...at, wires: [{ id: 'sf6', port: 0 }] }] },

    cap('src1', 't1', ['i1']),
    instance('i1', 'sf1', 't1', [['out1a'], ['out1b']], { name: 'first', env: [{ name: 'GREETING', type: 'str', value: 'hi' }] }),
    cap('out1a', 't1'),
    cap('out1b', 't1'),
    cap('src2', 't1', ['i2']),
    instance('i2', 'sf1', 't1', [['out2a'], []], { name: 'second' }),
    cap('out2a', 't1'),
    cap('src3', 't1', ['i3']),
    instance('i3', 'sf2', 't1', [['out3']], { name: 'outer' }),
    cap('out3', 't1'),
    cap('src4', 't1', ['i4']),
    instance('i4', 'sf3', 't1', [], { name: 'busy one' }),
    { id: 'st4', type: 'status', z: 't1', scope: ['i4'], ...at, wires: [['status4']] },
    cap('status4', 't1'),
    { id: 'st1', type: 'status', z: 't1', scope: ['i1'], ...at, wires: [['status1']] },
    cap('status1', 't1'),
    cap('src5', 't1', ['i5']),
    instance('i5', 'sf4', 't1', []),
    { id: 'catch5', type: 'catch', z: 't1', scope: ['i5'], ...at, wires: [['caught5']] },
    cap('caught5', 't1'),
    cap('src6', 't1', ['i6']),
    instance('i6', 'sf5', 't1', [['out6']]),
    { id: 'catch6', type: 'catch', z: 't1', scope: ['i6'], ...at, wires: [['caught6']] },
    cap('out6', 't1'),
    cap('caught6', 't1'),
    cap('src7', 't1', ['i7']),
    instance('i7', 'sf6', 't1', [['out7a', 'out7b']]),
    cap('out7a', 't1'),
    cap('out7b', 't1'),
  ];
}

describe('subflow instances', () => {
  let server: TestServer;
  let capture: Capture;
  const receive = (id: string, msg: Msg) => {
    const target = server.instance.runtime.services.nodes.get(id);
    assert.ok(target, `node ${id} is running`);
    target.receive(msg);
  };
  const last = async (name: string, count: number) => plain((await capture.waitFor(name, count))[count - 1]);

  before(async () => {
    server = await startServer();
    capture = installCapture(server);
    await deploy(server, flows());
    server.instance.runtime.context.getFlowContext('t1').set('tabvar', 'from the tab');
  });
  after(() => server.dispose());

  test('instance and internal nodes are live under their ids', () => {
    const nodes = server.instance.runtime.services.nodes;
    assert.equal(nodes.get('i1')?.type, 'subflow:sf1');
    const internal = nodes.get('i1-sf1-fn');
    assert.equal(internal?.type, 'function');
    assert.equal(internal?._alias, 'sf1-fn');
    assert.equal(internal?.z, 'i1');
    assert.equal(nodes.has('sf1-fn'), false, 'template nodes do not run themselves');
    assert.ok(nodes.get('i3-sf2-inner-sf1-fn'), 'nested instance internals run');
    assert.deepEqual(server.instance.runtime.getState(), { state: 'start' });
  });

  test('one input, two outputs, env overrides and built-in subflow variables', async () => {
    receive('src1', { payload: 'x' });
    assert.deepEqual((await last('out1a', 1)).payload, {
      in: 'x', greeting: 'hi', count: 3, sub: 'first', subId: 'i1', tab: 'main', n: 1, f: 1, parent: 'from the tab', id: 'i1-sf1-fn',
    });
    receive('src1', { payload: 'second' });
    assert.equal((await last('out1b', 1)).payload.in, 'second');
    assert.equal(capture.of('out1a').length, 1);
  });

  test('instances of one template have their own env, node context and flow context', async () => {
    receive('src2', { payload: 'y' });
    const out = (await last('out2a', 1)).payload;
    assert.equal(out.greeting, 'hello', 'template default');
    assert.equal(out.count, 3);
    assert.equal(out.sub, 'second');
    assert.equal(out.n, 1, 'node context is per instance');
    assert.equal(out.f, 1, 'flow context is per instance');
    const ctx = server.instance.runtime.context;
    assert.equal(ctx.getFlowContext('i1').get('f'), 2);
    assert.equal(ctx.getFlowContext('i2').get('f'), 1);
    assert.equal(ctx.getFlowContext('t1').get('f'), undefined);
  });

  test('nested subflows run with their own overrides', async () => {
    receive('src3', { payload: 'z' });
    const out = (await last('out3', 1)).payload;
    assert.equal(out.greeting, 'nested');
    assert.equal(out.sub, 'inner');
    assert.equal(out.subId, 'i3-sf2-inner');
    assert.equal(out.id, 'i3-sf2-inner-sf1-fn');
    assert.equal(out.parent, undefined, "the inner instance's parent is the outer instance");
  });

  test('the status port sets the instance status, seen by status nodes on the parent tab', async () => {
    receive('src4', { payload: 'now' });
    const msg = await last('status4', 1);
    assert.deepEqual(msg.status, { text: 'busy now', source: { id: 'i4', type: 'subflow:sf3', name: 'busy one' } });
  });

  test('internal status without a status port reaches status nodes scoped to the instance', async () => {
    const before = capture.of('status1').length;
    receive('src1', { payload: 'status' });
    const msg = await last('status1', before + 1);
    assert.deepEqual(msg.status, { text: 'seen status', source: { id: 'i1-sf1-fn', type: 'function', name: 'fn sf1-fn' } });
  });

  test('an error nothing inside catches reaches catch nodes scoped to the instance', async () => {
    receive('src5', { payload: 'boom' });
    const msg = await last('caught5', 1);
    assert.equal(msg.payload, 'boom');
    assert.equal(msg.error.message, 'Error: inner boom');
    assert.deepEqual(msg.error.source, { id: 'i5-sf4-fn', type: 'function', name: 'fn sf4-fn', count: 1 });
  });

  test('an error caught inside stays inside', async () => {
    receive('src6', { payload: 'p' });
    const msg = await last('out6', 1);
    assert.equal(msg.error.message, 'Error: handled inside');
    assert.equal(msg.error.source.id, 'i6-sf5-fn');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(capture.of('caught6').length, 0);
  });

  test('an input wired straight to an output passes messages through, cloned per wire', async () => {
    receive('src7', { payload: { n: 1 } });
    const [a] = await capture.waitFor('out7a', 1);
    const [b] = await capture.waitFor('out7b', 1);
    assert.deepEqual(plain(a.payload), { n: 1 });
    assert.deepEqual(plain(b.payload), { n: 1 });
    assert.notEqual(a, b);
  });
});
