import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { COMPAT_FIXTURES, TAB, capture, flowNode } from './support.js';
import { deploy } from '../helpers/deploy.js';

describe('compat: node instances built by a contributed module', { timeout: 30_000 }, () => {
  let server: TestServer;
  let cap: Capture;
  const receive = (id: string, msg: Record<string, unknown>) => server.instance.runtime.services.nodes.get(id)!.receive(msg);
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  before(async () => {
    server = await startServer({ nodesDir: [COMPAT_FIXTURES] });
    cap = installCapture(server);
  });
  after(() => server.dispose());
  beforeEach(() => cap.messages.clear());

  it('constructs a config node with credentials before the flow node that getNode()s it in its constructor', async () => {
    await deploy(server, [
      // Listed after its user on purpose: construction order must not follow the array.
      flowNode('client', 'compat-remote-client', [['cap']], { server: 'srv' }),
      { id: 'srv', type: 'compat-remote-server', host: 'db.local', credentials: { user: 'alice', password: 'pw1' } },
      capture('cap', 'remote'),
    ], { tab: TAB });
    receive('client', { payload: null });
    const [msg] = await cap.waitFor('remote');
    assert.deepEqual(msg.payload, { seenAtConstruction: true, host: 'db.local', user: 'alice', password: 'pw1', sameInstance: true });
    const creds = await request(server.at('credentials/compat-remote-server/srv'));
    assert.deepEqual(creds.body, { user: 'alice', has_password: true });
  });

  it('runs an ES class with a bound async onInput(msg, send, done): done() fires Complete, done(err) reaches Catch', async () => {
    await deploy(server, [
      flowNode('classy', 'compat-classy', [['cap']], { prefix: '#' }),
      capture('cap', 'classy'),
      flowNode('complete', 'complete', [['cap-complete']], { scope: ['classy'] }),
      capture('cap-complete', 'classy-complete'),
      flowNode('catch', 'catch', [['cap-catch']], { scope: ['classy'], uncaught: false }),
      capture('cap-catch', 'classy-catch'),
    ], { tab: TAB });
    receive('classy', { payload: 'a' });
    const [msg] = await cap.waitFor('classy');
    assert.equal(msg.payload, '#a');
    assert.equal(msg.isNode, true);
    assert.equal((await cap.waitFor('classy-complete'))[0].payload, '#a');
    receive('classy', { payload: 'b', fail: true });
    const [caught] = await cap.waitFor('classy-catch');
    assert.equal(caught.error.message, 'Error: classy failed');
    assert.deepEqual(caught.error.source, { id: 'classy', type: 'compat-classy', name: undefined, count: 1 });
  });

  it('fires Complete for a 3-parameter handler that calls done, never for a 2-parameter one', async () => {
    await deploy(server, [
      flowNode('three', 'compat-done3', [['cap3']]),
      flowNode('two', 'compat-done2', [['cap2']]),
      capture('cap3', 'three'),
      capture('cap2', 'two'),
      flowNode('complete', 'complete', [['cap-complete']], { scope: ['three', 'two'] }),
      capture('cap-complete', 'completed'),
    ], { tab: TAB });
    receive('three', { payload: 3 });
    receive('two', { payload: 2 });
    await cap.waitFor('three');
    await cap.waitFor('two');
    const [done] = await cap.waitFor('completed');
    await pause(50);
    assert.deepEqual(cap.of('completed').map((m) => m.payload), [3]);
    assert.equal(done.metric, false, 'metric() is false while metrics are off');
  });

  it('publishes status given as a number, and a numeric text, as strings to Status nodes', async () => {
    await deploy(server, [
      flowNode('st', 'compat-status'),
      flowNode('watch', 'status', [['cap']], { scope: ['st'] }),
      capture('cap', 'status'),
    ], { tab: TAB });
    receive('st', { payload: 42 });
    const got = await cap.waitFor('status', 2);
    assert.deepEqual(got[0].status, { text: '42', source: { id: 'st', type: 'compat-status', name: undefined } });
    assert.deepEqual(got[1].status, { fill: 'green', shape: 'dot', text: '7', source: { id: 'st', type: 'compat-status', name: undefined } });
  });

  it('calls close handlers by arity: (), (done), (removed, done) with removed false on redeploy and true on delete', async () => {
    const runtime = server.instance.runtime;
    runtime.context.getGlobalContext().set('closeLog', []);
    const closer = flowNode('closer', 'compat-closer');
    await deploy(server, [closer], { tab: TAB });
    await deploy(server, [{ ...closer, name: 'changed' }], { tab: TAB });
    assert.deepEqual(runtime.context.getGlobalContext().get('closeLog'), ['0', '1:function', '2:false']);
    await deploy(server, [], { tab: TAB });
    assert.deepEqual(runtime.context.getGlobalContext().get('closeLog'), ['0', '1:function', '2:false', '0', '1:function', '2:true']);
  });

  it('context: same object every call, this-independent methods, array keys with one callback argument per key, "default" store', async () => {
    await deploy(server, [flowNode('ctx', 'compat-context', [['cap']]), capture('cap', 'ctx')], { tab: TAB });
    receive('ctx', {});
    receive('ctx', {});
    const [first, second] = await cap.waitFor('ctx', 2);
    assert.deepEqual(first.payload, {
      sameObject: true,
      adhoc: 1,
      applied: 'yes',
      setErr: null,
      getArgs: [null, 1, 2],
      arrayNoCb: [1, 2],
      nested: { deep: ['x'] },
      keys: ['a', 'b'],
      afterDelete: ['b'],
    });
    assert.equal(second.payload.adhoc, 2, 'ad-hoc properties on node.context() persist between messages');
  });

  it('gives nodes behind http in the Express msg.req and a msg.res whose _res http response answers with', async () => {
    await deploy(server, [
      flowNode('in', 'http in', [['req']], { url: '/compat/:thing', method: 'post' }),
      flowNode('req', 'compat-req', [['out']]),
      flowNode('out', 'http response', [], { statusCode: '' }),
    ], { tab: TAB });
    const res = await request(new URL('compat/widget?x=1', server.url).href, { method: 'POST', json: { a: [1] }, headers: { 'x-compat': 'h' } });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.body, { header: 'h', headers: 'h', query: { x: '1' }, params: { thing: 'widget' }, body: { a: [1] }, method: 'POST', hasRes: true });
  });
});
