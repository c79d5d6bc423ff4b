import { test, beforeEach, afterEach, describe } from 'node:test';
import assert from 'node:assert/strict';
import { request, startServer, type TestServer } from '../../helpers/server.js';
import { deploy, type Conf } from '../../helpers/deploy.js';
import { installCapture, type Capture } from '../../helpers/capture.js';

const cap = (id: string, z: string, wires: string[] = [], extra: Conf = {}): Conf => ({
  id, type: 'test-capture', z, name: id, passthrough: true, x: 100, y: 100, wires: [wires], ...extra,
});

/** Chain A→B→C and D alone on t1; config node cfg used by E→F on t2 (the reference's example). */
function base(): Conf[] {
  return [
    { id: 't1', type: 'tab', label: 'one' },
    { id: 't2', type: 'tab', label: 'two' },
    cap('A', 't1', ['B']),
    cap('B', 't1', ['C']),
    cap('C', 't1'),
    cap('D', 't1'),
    { id: 'cfg', type: 'test-capture', name: 'cfg', broker: 'one' },
    cap('E', 't2', ['F'], { server: 'cfg' }),
    cap('F', 't2'),
  ];
}

function edit(flows: Conf[], id: string, patch: Conf): Conf[] {
  return flows.map((n) => (n.id === id ? { ...n, ...patch } : n));
}

describe('deployment types restart exactly the expected nodes', () => {
  let server: TestServer;
  let capture: Capture;

  beforeEach(async () => {
    server = await startServer();
    capture = installCapture(server);
    await deploy(server, base(), { type: 'full' });
    capture.restartedSince();
  });
  afterEach(() => server.dispose());

  test('full restarts everything', async () => {
    await deploy(server, edit(base(), 'B', { info: 'x' }), { type: 'full' });
    assert.deepEqual(capture.restartedSince(), ['A', 'B', 'C', 'D', 'E', 'F', 'cfg']);
  });

  test('nodes restarts only the changed node', async () => {
    await deploy(server, edit(base(), 'B', { info: 'x' }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), ['B']);
  });

  test('flows restarts the connected wiring component of the change', async () => {
    await deploy(server, edit(base(), 'B', { info: 'x' }), { type: 'flows' });
    assert.deepEqual(capture.restartedSince(), ['A', 'B', 'C']);
  });

  test('moving a node restarts nothing', async () => {
    await deploy(server, edit(base(), 'B', { x: 999, y: 5 }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), []);
  });

  test('a config node change restarts its users', async () => {
    await deploy(server, edit(base(), 'cfg', { broker: 'two' }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), ['E', 'cfg']);
  });

  test('rewiring in a nodes deploy hot-swaps wires without a restart', async () => {
    await deploy(server, edit(base(), 'A', { wires: [['D']] }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), []);
    server.instance.runtime.services.nodes.get('A')!.receive({ payload: 'via-new-wire' });
    const got = await capture.waitFor('D');
    assert.equal(got[0].payload, 'via-new-wire');
    assert.equal(capture.of('B').length, 0);
  });

  test('a removed node closes with removed=true; a restarted one with removed=false', async () => {
    const without = base().filter((n) => n.id !== 'C').map((n) => (n.id === 'B' ? { ...n, wires: [[]], info: 'y' } : n));
    await deploy(server, without, { type: 'nodes' });
    assert.deepEqual(capture.closes.get('C'), [{ removed: true }]);
    assert.deepEqual(capture.closes.get('B'), [{ removed: false }]);
    assert.equal(server.instance.runtime.services.nodes.has('C'), false);
  });

  test('disabled nodes and tabs are stored but not run', async () => {
    const flows = base().map((n) => (n.id === 'D' ? { ...n, d: true } : n.id === 't2' ? { ...n, disabled: true } : n));
    await deploy(server, flows, { type: 'full' });
    const live = server.instance.runtime.services.nodes;
    assert.equal(live.has('D'), false);
    assert.equal(live.has('E'), false);
    assert.equal(live.has('A'), true);
    const stored = await request(server.at('flows'));
    assert.equal(stored.body.length, flows.length);
  });

  test('messages flow along wires with the first delivery uncloned', async () => {
    const msg: Record<string, unknown> = { payload: { deep: 1 } };
    server.instance.runtime.services.nodes.get('A')!.receive(msg);
    const [got] = await capture.waitFor('C');
    assert.equal(got, msg);
    assert.equal(typeof got._msgid, 'string');
  });
});

describe('missing types', () => {
  test('a flow using an unknown type waits, others run, and it starts once the type registers', async () => {
    const server = await startServer();
    try {
      const flows = [
        { id: 't1', type: 'tab' },
        { id: 't2', type: 'tab' },
        { id: 'w', type: 'test-capture', z: 't1', x: 1, y: 1, wires: [] },
        { id: 'ok', type: 'comment', z: 't2', x: 1, y: 1, wires: [] },
      ];
      await deploy(server, flows);
      assert.deepEqual((await request(server.at('flows/state'))).body, { state: 'start', missingTypes: ['test-capture'] });
      assert.equal(server.instance.runtime.services.nodes.has('ok'), true);
      const capture = installCapture(server);
      for (let i = 0; i < 100 && !capture.starts.has('w'); i++) await new Promise((res) => setTimeout(res, 10));
      assert.equal(capture.starts.get('w'), 1);
      assert.deepEqual((await request(server.at('flows/state'))).body, { state: 'start' });
    } finally {
      await server.dispose();
    }
  });
});
