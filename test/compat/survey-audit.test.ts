/**
 * Pins Node-RED 4.1 node-instance behaviour that the survey audit (node-api-compat.md tiers 0–3,
 * notes A–J, section 4; node-red-behaviour.md §6) found missing or different, each through a real
 * server: deploy over the HTTP API, inject with node.receive(), observe with capture nodes.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { COMPAT_FIXTURES, TAB, capture, flowNode } from './support.js';
import { deploy } from '../helpers/deploy.js';

const AUDIT_FIXTURES = path.join(COMPAT_FIXTURES, 'audit');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

describe('compat audit: Node-RED node-instance semantics', { timeout: 30_000 }, () => {
  let server: TestServer;
  let cap: Capture;
  const receive = (id: string, msg: Record<string, unknown>) => server.instance.runtime.services.nodes.get(id)!.receive(msg);
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  before(async () => {
    process.env.AUDIT_DEV = 'dev1';
    server = await startServer({ nodesDir: [AUDIT_FIXTURES] });
    cap = installCapture(server);
  });
  after(async () => {
    delete process.env.AUDIT_DEV;
    await server.dispose();
  });
  beforeEach(() => cap.messages.clear());

  it('env substitution in node properties replaces whole ${X} and $(X) values only, and keeps an unset ${X}', async () => {
    // Node-RED's mapEnvVarProperties: /^\${(\S+)}$/ or /^\$\((\S+)\)$/; "${device}/rpc" is not substituted
    // (maintainers: composite strings are not valid); an undefined variable leaves the text as written.
    await deploy(server, [
      flowNode('echo', 'audit-config-echo', [['cap']], {
        topic: '${AUDIT_DEV}/rpc',
        missing: '${AUDIT_UNSET_VARIABLE}',
        old: '$(AUDIT_DEV)',
        whole: '${AUDIT_DEV}',
      }),
      capture('cap', 'echo'),
    ], { tab: TAB });
    receive('echo', {});
    const [msg] = await cap.waitFor('echo');
    assert.deepEqual(msg.payload, {
      topic: '${AUDIT_DEV}/rpc', missing: '${AUDIT_UNSET_VARIABLE}', old: 'dev1', whole: 'dev1', hasName: false,
      module: 'node-red-contrib-audit', moduleHidden: true, path: 'compat-tab/echo',
    });
  });

  it('a function node keeps JavaScript template literals in its code (no ${} substitution inside strings)', async () => {
    await deploy(server, [
      flowNode('fn', 'function', [['cap']], { func: 'const a = 1;\nmsg.payload = `a=${a}`;\nreturn msg;', outputs: 1 }),
      capture('cap', 'fn'),
    ], { tab: TAB });
    receive('fn', {});
    const [msg] = await cap.waitFor('fn');
    assert.equal(msg.payload, 'a=1');
  });

  it('constructs from a deep copy of the config: a constructor mutating nested config does not change the stored flow', async () => {
    await deploy(server, [flowNode('echo', 'audit-config-echo', [], { nested: { list: ['a'] } })], { tab: TAB });
    const res = await request(server.at('flows'));
    assert.equal(res.status, 200, res.text);
    const flows = (Array.isArray(res.body) ? res.body : res.body.flows) as { id: string; nested?: unknown }[];
    assert.deepEqual(flows.find((n) => n.id === 'echo')!.nested, { list: ['a'] });
    // The live configuration (what diffs compare and RED.nodes.eachNode shows) is untouched too.
    const live = server.instance.runtime.getFlows().flows as { id: string; nested?: unknown }[];
    assert.deepEqual(live.find((n) => n.id === 'echo')!.nested, { list: ['a'] });
  });

  it('copies name only when it is truthy: name "" leaves node.name unset, so Catch sees source.name undefined', async () => {
    await deploy(server, [
      flowNode('thrower', 'audit-thrower', [], { name: '' }),
      flowNode('catch', 'catch', [['cap']], { scope: ['thrower'], uncaught: false }),
      capture('cap', 'caught'),
      flowNode('echo', 'audit-config-echo', [['cap-echo']], { name: '' }),
      capture('cap-echo', 'echo'),
    ], { tab: TAB });
    receive('thrower', { payload: 1 });
    const [caught] = await cap.waitFor('caught');
    assert.deepEqual(caught.error.source, { id: 'thrower', type: 'audit-thrower', name: undefined, count: 1 });
    receive('echo', {});
    const [echo] = await cap.waitFor('echo');
    assert.equal(echo.payload.hasName, false);
  });

  it('a lone input handler gets a working done even when it declares fewer than 3 parameters', async () => {
    // Node.js _emitInput: a single callback is always called with (msg, send, done) and done completes.
    await deploy(server, [
      flowNode('lazy', 'audit-lazy-done', [['cap']]),
      capture('cap', 'lazy'),
      flowNode('complete', 'complete', [['cap-complete']], { scope: ['lazy'] }),
      capture('cap-complete', 'completed'),
      flowNode('catch', 'catch', [['cap-catch']], { scope: ['lazy'], uncaught: false }),
      capture('cap-catch', 'caught'),
    ], { tab: TAB });
    receive('lazy', { payload: 'ok' });
    await cap.waitFor('lazy');
    const [completed] = await cap.waitFor('completed', 1, 2000);
    assert.equal(completed.payload, 'ok');
    receive('lazy', { payload: 'bad', fail: true });
    const [caught] = await cap.waitFor('caught', 1, 2000);
    assert.equal(caught.error.message, 'Error: lazy failed');
  });

  it('stops an error loop when the count would reach 10: Catch sees counts 1 to 9, then the error is logged', async () => {
    // Flow.handleError: count = source.count + 1; at count === 10 it warns "nodes.flow.error-loop" and returns false.
    await deploy(server, [
      flowNode('thrower', 'audit-thrower'),
      flowNode('catch', 'catch', [['thrower', 'cap']], { scope: ['thrower'], uncaught: false }),
      capture('cap', 'loop'),
    ], { tab: TAB });
    receive('thrower', { payload: 'x' });
    await cap.waitFor('loop', 9);
    await pause(100);
    assert.deepEqual(cap.of('loop').map((m) => m.error.source.count), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('send([[m1, m2]]) to two wires delivers wire by wire: A gets m1 and m2, then B gets m1 and m2', async () => {
    // Node.send builds its events per output, then per wire, then per message.
    server.instance.runtime.context.getGlobalContext().set('order', []);
    await deploy(server, [
      flowNode('fan', 'audit-fanout', [['a', 'b']]),
      flowNode('a', 'audit-recorder', [], { name: 'A' }),
      flowNode('b', 'audit-recorder', [], { name: 'B' }),
    ], { tab: TAB });
    receive('fan', {});
    const global = server.instance.runtime.context.getGlobalContext();
    for (let i = 0; i < 100 && ((global.get('order') as string[]) ?? []).length < 4; i++) await pause(10);
    assert.deepEqual(global.get('order'), ['A:1', 'A:2', 'B:1', 'B:2']);
  });

  it('evaluateNodeProperty(date) formats with moment tokens beyond the numeric subset (MMM, X)', async () => {
    await deploy(server, [flowNode('date', 'audit-date', [['cap']], { format: 'MMM X' }), capture('cap', 'date')], { tab: TAB });
    const before = new Date();
    receive('date', {});
    const [msg] = await cap.waitFor('date');
    const after = new Date();
    const [month, seconds] = String(msg.payload).split(' ');
    assert.ok([MONTHS[before.getMonth()], MONTHS[after.getMonth()]].includes(month), `month token: ${msg.payload}`);
    const secs = Number(seconds);
    assert.ok(secs >= Math.floor(before.getTime() / 1000) && secs <= Math.floor(after.getTime() / 1000), `unix seconds token: ${msg.payload}`);
  });
});
