import type { TestServer } from '../helpers/server.js';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createRedApi } from '../../src/runtime/red-api/red-api.js';
import type { Msg, Node, NodeConfig } from '../../src/runtime/flows/node.js';
import { type Conf, flowSuite } from './flow.js';

const node = (id: string, type: string, z: string, extra: Conf = {}, wires: string[] = []): Conf => ({
  id, type, z, name: id, x: 100, y: 100, wires: [wires], ...extra,
});

/**
 * `test-worker`: sets `msg.status` as its status, fails with `msg.fail` through done(err), or
 * passes the message on and completes.
 */
function installWorker(server: TestServer): void {
  const runtime = server.instance.runtime;
  if (!runtime.registry.modules.has('test-helpers')) runtime.registry.addModule({ name: 'test-helpers', version: '1.0.0', builtin: false });
  const RED = createRedApi(runtime, runtime.registry.addSet('test-helpers', 'worker'));
  function Worker(this: Node, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg: Msg, send: (m: Msg) => void, done: (err?: unknown) => void) => {
      if (msg.status) this.status(msg.status);
      if (msg.fail) return done(new Error(msg.fail));
      send(msg);
      done();
    });
  }
  RED.nodes.registerType('test-worker', Worker as never);
}

/** Lets already-queued deliveries run, so a count of zero means "not delivered". */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('catch, status and complete nodes', () => {
  const t = flowSuite((server) => {
    installWorker(server);
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'one' },
      { id: 't2', type: 'tab', label: 'two' },
      node('w1', 'test-worker', 't1'),
      node('w2', 'test-worker', 't1'),
      node('c-scoped', 'catch', 't1', { scope: ['w1'], uncaught: false }, ['cap-scoped']),
      node('c-all', 'catch', 't1', { scope: null, uncaught: false }, ['cap-all']),
      node('c-uncaught', 'catch', 't1', { scope: null, uncaught: true }, ['cap-uncaught']),
      node('s-scoped', 'status', 't1', { scope: ['w1'] }, ['cap-status-scoped']),
      node('s-all', 'status', 't1', { scope: null }, ['cap-status-all']),
      node('k1', 'complete', 't1', { scope: ['w1'] }, ['cap-complete']),
      node('s-wired', 'status', 't1', { scope: ['w1', 'cap-status-wired', 'w2'] }, ['cap-status-wired']),
      node('k-wired', 'complete', 't1', { scope: ['cap-complete-wired', 'w1'] }, ['cap-complete-wired']),
      node('cap-status-wired', 'test-capture', 't1'),
      node('cap-complete-wired', 'test-capture', 't1'),
      node('w3', 'test-worker', 't2'),
      node('c-only-uncaught', 'catch', 't2', { uncaught: true }, ['cap-uncaught2']),
      ...['cap-scoped', 'cap-all', 'cap-uncaught', 'cap-status-scoped', 'cap-status-all', 'cap-complete'].map((id) => node(id, 'test-capture', 't1')),
      node('cap-uncaught2', 'test-capture', 't2'),
    ];
    return flows;
  });
  const { receive } = t;

  test('a scoped catch and an unscoped catch both get an error from a node in scope', async () => {
    receive('w1', { _msgid: 'm1', payload: 42, fail: 'boom' });
    const [scoped] = await t.capture.waitFor('cap-scoped');
    const [all] = await t.capture.waitFor('cap-all');
    for (const msg of [scoped, all]) {
      assert.equal(msg._msgid, 'm1');
      assert.equal(msg.payload, 42);
      assert.equal(msg.error.message, 'Error: boom');
      assert.deepEqual(msg.error.source, { id: 'w1', type: 'test-worker', name: 'w1', count: 1 });
    }
    await settle();
    assert.equal(t.capture.of('cap-uncaught').length, 0, 'handled errors do not reach uncaught-only catch nodes');
  });

  test('a catch scoped to other nodes ignores the error; the unscoped catch takes it', async () => {
    receive('w2', { payload: 'x', fail: 'other' });
    const all = await t.capture.waitFor('cap-all', 2);
    assert.equal(all[1].error.message, 'Error: other');
    assert.equal(all[1].error.source.id, 'w2');
    await settle();
    assert.equal(t.capture.of('cap-scoped').length, 1);
    assert.equal(t.capture.of('cap-uncaught').length, 0);
  });

  test('an uncaught-only catch gets errors nobody else handles', async () => {
    receive('w3', { payload: 'y', fail: 'lonely' });
    const [msg] = await t.capture.waitFor('cap-uncaught2');
    assert.equal(msg.error.message, 'Error: lonely');
    assert.equal(msg.error.source.id, 'w3');
    assert.equal(msg.payload, 'y');
  });

  test('status nodes receive status from the nodes in their scope', async () => {
    receive('w1', { status: { fill: 'green', shape: 'dot', text: 'ok' } });
    const [scoped] = await t.capture.waitFor('cap-status-scoped');
    assert.deepEqual(scoped.status, { fill: 'green', shape: 'dot', text: 'ok', source: { id: 'w1', type: 'test-worker', name: 'w1' } });
    const all = await t.capture.waitFor('cap-status-all');
    assert.equal(all.length, 1);
    receive('w2', { status: 'plain' });
    const all2 = await t.capture.waitFor('cap-status-all', 2);
    assert.deepEqual(all2[1].status, { text: 'plain', source: { id: 'w2', type: 'test-worker', name: 'w2' } });
    await settle();
    assert.equal(t.capture.of('cap-status-scoped').length, 1, 'w2 is outside the scoped status node');
  });

  test('a complete node fires when a node in its scope calls done()', async () => {
    const already = t.capture.of('cap-complete').length;
    receive('w2', { _msgid: 'not-watched', payload: 'b' });
    receive('w1', { _msgid: 'watched', payload: 'a' });
    const done = await t.capture.waitFor('cap-complete', already + 1);
    const last = done[done.length - 1];
    assert.equal(last._msgid, 'watched');
    assert.equal(last.payload, 'a');
    await settle();
    assert.deepEqual(t.capture.of('cap-complete').map((m) => m._msgid).filter((id) => id === 'not-watched'), []);
  });

  test('a complete node\'s message says which node completed it (msg.complete.source), as Node-RED\'s does', async () => {
    const already = t.capture.of('cap-complete').length;
    receive('w1', { _msgid: 'source', payload: 'a' });
    const [done] = (await t.capture.waitFor('cap-complete', already + 1)).slice(already);
    assert.deepEqual(done.complete, { source: { id: 'w1', type: 'test-worker', name: 'w1' } });
  });

  test('status and complete nodes drop the nodes they are wired to from their scope', () => {
    const scopeOf = (id: string) => (t.server.instance.runtime.services.nodes.get(id) as unknown as { scope: string[] }).scope;
    assert.deepEqual(scopeOf('s-wired'), ['w1', 'w2']);
    assert.deepEqual(scopeOf('k-wired'), ['w1']);
  });
});
