import { test, beforeEach, afterEach, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../../../helpers/server.js';
import { deploy, type Conf } from '../../../helpers/deploy.js';
import { receiver } from '../../../nodes/flow.js';
import { installCapture, type Capture } from '../../../helpers/capture.js';

const at = { x: 100, y: 100 };
const cap = (id: string, z: string, wires: string[] = [], extra: Conf = {}): Conf => ({
  id, type: 'test-capture', z, name: id, passthrough: true, ...at, wires: [wires], ...extra,
});

/** Template sfc (a capture node between in and out) used twice on t1, plus an unrelated chain. */
function base(): Conf[] {
  return [
    { id: 't1', type: 'tab', label: 'one' },
    { id: 'sfc', type: 'subflow', name: 'counted', in: [{ ...at, wires: [{ id: 'inner' }] }], out: [{ ...at, wires: [{ id: 'inner', port: 0 }] }] },
    cap('inner', 'sfc'),
    cap('src', 't1', ['ia']),
    { id: 'ia', type: 'subflow:sfc', z: 't1', ...at, wires: [['outa']] },
    { id: 'ib', type: 'subflow:sfc', z: 't1', ...at, wires: [['outb']] },
    cap('outa', 't1'),
    cap('outb', 't1'),
    cap('other', 't1', ['other2']),
    cap('other2', 't1'),
  ];
}

const edit = (flows: Conf[], id: string, patch: Conf) => flows.map((n) => (n.id === id ? { ...n, ...patch } : n));

describe('deploys restart subflow instances as a whole', () => {
  let server: TestServer;
  let capture: Capture;

  const receive = receiver(() => server);

  beforeEach(async () => {
    server = await startServer();
    capture = installCapture(server);
    await deploy(server, base(), { type: 'full' });
    assert.deepEqual(capture.restartedSince(), ['ia-inner', 'ib-inner', 'other', 'other2', 'outa', 'outb', 'src']);
  });
  afterEach(() => server.dispose());

  test('changing a node inside the template restarts both instances and nothing else', async () => {
    await deploy(server, edit(base(), 'inner', { info: 'changed' }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), ['ia-inner', 'ib-inner']);
    assert.deepEqual(capture.closes.get('ia-inner'), [{ removed: false }]);
    receive('src', { payload: 'after restart' });
    assert.equal((await capture.waitFor('outa', 1))[0].payload, 'after restart');
  });

  test('changing the template env restarts its instances under every deployment type', async () => {
    await deploy(server, edit(base(), 'sfc', { env: [{ name: 'X', type: 'str', value: '1' }] }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), ['ia-inner', 'ib-inner']);
    await deploy(server, edit(base(), 'sfc', { env: [{ name: 'X', type: 'str', value: '2' }] }), { type: 'flows' });
    assert.deepEqual(capture.restartedSince(), ['ia-inner', 'ib-inner', 'outa', 'outb', 'src']);
  });

  test('changing one instance restarts only that instance', async () => {
    await deploy(server, edit(base(), 'ib', { env: [{ name: 'X', type: 'num', value: '5' }] }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), ['ib-inner']);
  });

  test('rewiring an instance moves its output without a restart', async () => {
    await deploy(server, edit(base(), 'ia', { wires: [['other2']] }), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), []);
    receive('src', { payload: 'rewired' });
    assert.equal((await capture.waitFor('other2', 1))[0].payload, 'rewired');
    assert.equal(capture.of('outa').length, 0);
  });

  test('removing an instance closes its internal nodes', async () => {
    await deploy(server, base().filter((n) => n.id !== 'ib'), { type: 'nodes' });
    assert.deepEqual(capture.restartedSince(), []);
    assert.deepEqual(capture.closes.get('ib-inner'), [{ removed: true }]);
    const nodes = server.instance.runtime.services.nodes;
    assert.equal(nodes.has('ib'), false);
    assert.equal(nodes.has('ib-inner'), false);
    assert.equal(nodes.has('ia-inner'), true);
  });

  test('stopping the runtime closes every internal node', async () => {
    await server.stop();
    assert.deepEqual(capture.closes.get('ia-inner'), [{ removed: false }]);
    assert.deepEqual(capture.closes.get('ib-inner'), [{ removed: false }]);
  });

  test('a template using a missing type makes only the tab using it wait', async () => {
    await deploy(server, [
      ...base(),
      { id: 't2', type: 'tab', label: 'two' },
      { id: 'sfm', type: 'subflow', name: 'broken', in: [], out: [] },
      { id: 'ghost', type: 'no-such-type', z: 'sfm', ...at, wires: [] },
      { id: 'im', type: 'subflow:sfm', z: 't2', ...at, wires: [] },
      cap('t2-node', 't2'),
    ], { type: 'full' });
    const runtime = server.instance.runtime;
    assert.deepEqual(runtime.getState(), { state: 'start', missingTypes: ['no-such-type'] });
    assert.equal(runtime.services.nodes.has('im'), false);
    assert.equal(runtime.services.nodes.has('t2-node'), false);
    assert.equal(runtime.services.nodes.has('ia-inner'), true);
    receive('src', { payload: 'still running' });
    assert.equal((await capture.waitFor('outa', 1))[0].payload, 'still running');
  });
});
