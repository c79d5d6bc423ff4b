import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { deploy, type Conf } from '../helpers/deploy.js';

/**
 * A node wired twice to itself doubles its messages at every
 * pass. Before the fix the admin API stopped answering and RSS grew past 4 GB in 24 s. Now the tab
 * that floods the delivery queue beyond messageQueueLimit is stopped and says so in the flows
 * state, and every other flow and the admin API keep answering throughout.
 */
const LIMIT = 20_000;

const looping = (wires: string[][]): Conf[] => [
  { id: 'loop', type: 'tab', label: 'Loop' },
  { id: 'start', type: 'inject', z: 'loop', props: [{ p: 'payload', v: '1', vt: 'num' }], once: true, onceDelay: 0.1, repeat: '', x: 1, y: 1, wires: [['twice']] },
  { id: 'twice', type: 'function', z: 'loop', func: 'msg.payload++; return msg;', outputs: 1, x: 1, y: 1, wires },
  { id: 'healthy', type: 'tab', label: 'Healthy' },
  { id: 'in', type: 'http in', z: 'healthy', url: '/alive', method: 'get', x: 1, y: 1, wires: [['out']] },
  { id: 'out', type: 'http response', z: 'healthy', statusCode: '200', x: 1, y: 1, wires: [] },
];

describe('a message loop that fans out past messageQueueLimit', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ messageQueueLimit: LIMIT });
  });
  after(() => server.dispose());

  it('stops the flooding tab with a clear error while the admin API and other flows keep answering', async () => {
    await deploy(server, looping([['twice', 'twice']]));
    const state = await eventually(async () => {
      // Each poll is itself proof that the admin API answers during the flood.
      const res = await request(server.at('flows/state'));
      assert.equal(res.status, 200);
      const errors = (res.body as { errors?: { id: string; type: string; error: string }[] }).errors ?? [];
      assert.ok(errors.some((e) => e.id === 'loop'), 'no error for the loop tab yet');
      return res.body as { state: string; errors: { id: string; type: string; error: string }[] };
    }, 60_000, 50);
    assert.equal(state.state, 'start');
    const report = state.errors.find((e) => e.id === 'loop')!;
    assert.equal(report.type, 'tab');
    assert.match(report.error, /messageQueueLimit \(20000\)/);
    assert.ok(server.logs.some((l) => l.includes('"level":50') && l.includes('Flow \\"Loop\\" (loop) stopped')), 'the log names the stopped flow');

    // The tab is stopped: its nodes are gone and the queue drains.
    await eventually(() => server.instance.runtime.services.queue.depth === 0, 30_000);
    assert.equal(server.instance.runtime.services.nodes.has('twice'), false);
    assert.equal((await request(server.at('alive'))).status, 200);
    assert.equal((await request(server.at('flows'))).status, 200);
  });

  it('keeps the tab stopped across deploys of other tabs, and restarts it when a deploy fixes it', async () => {
    const flows = looping([['twice', 'twice']]);
    const other = flows.map((n) => (n.id === 'out' ? { ...n, statusCode: '201' } : n));
    await deploy(server, other, { type: 'nodes' });
    assert.equal((await request(server.at('alive'))).status, 201);
    assert.equal(server.instance.runtime.services.nodes.has('twice'), false);
    assert.ok(((await request(server.at('flows/state'))).body as { errors?: { id: string }[] }).errors?.some((e) => e.id === 'loop'));

    await deploy(server, looping([[]]).map((n) => (n.id === 'out' ? { ...n, statusCode: '201' } : n)), { type: 'nodes' });
    await eventually(() => server.instance.runtime.services.nodes.has('twice'));
    const state = (await request(server.at('flows/state'))).body as { errors?: unknown[] };
    assert.equal(state.errors, undefined);
  });
});
