import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../helpers/server.js';
import { installCapture } from '../../helpers/capture.js';
import { deploy } from '../../helpers/deploy.js';

const flows = [
  { id: 't1', type: 'tab' },
  { id: 'a', type: 'test-capture', name: 'a', passthrough: true, z: 't1', x: 1, y: 1, wires: [['b', 'c']] },
  { id: 'b', type: 'test-capture', name: 'b', z: 't1', x: 1, y: 1, wires: [] },
  { id: 'c', type: 'test-capture', name: 'c', z: 't1', x: 1, y: 1, wires: [] },
];

test('message hooks run in Node-RED order, can modify and drop deliveries, and cost nothing once removed', async () => {
  const server = await startServer();
  const capture = installCapture(server);
  const hooks = server.instance.runtime.services.hooks;
  try {
    await deploy(server, flows);
    const seen: string[] = [];
    hooks.add('onSend.t', (events: { source: { id: string }; cloneMessage: boolean }[]) => {
      seen.push(`onSend:${events.length}:${events.map((e) => e.cloneMessage).join(',')}`);
    });
    hooks.add('preRoute.t', (e: { destination: { id: string } }) => {
      seen.push(`preRoute:${e.destination.id}`);
    });
    hooks.add('preDeliver.t', (e: { destination: { id: string }; msg: Record<string, unknown> }) => {
      seen.push(`preDeliver:${e.destination.id}`);
      if (e.destination.id === 'c') return false;
      e.msg.hooked = true;
    });
    hooks.add('onReceive.t', (e: { destination: { id: string } }) => {
      seen.push(`onReceive:${e.destination.id}`);
    });
    hooks.add('onComplete.t', (e: { node: { id: string } }) => {
      seen.push(`onComplete:${e.node.id}`);
    });
    server.instance.runtime.services.nodes.get('a')!.receive({ payload: 1 });
    const [got] = await capture.waitFor('b');
    assert.equal(got.hooked, true);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(capture.of('c').length, 0, 'preDeliver returning false drops that delivery');
    assert.deepEqual(seen.filter((s) => !s.startsWith('onComplete')), [
      'onReceive:a', 'onSend:2:false,true', 'preRoute:b', 'preDeliver:b', 'preRoute:c', 'preDeliver:c', 'onReceive:b',
    ]);
    assert.ok(seen.includes('onComplete:a') && seen.includes('onComplete:b'));
    hooks.remove('*.t');
    assert.equal(hooks.anyMessageHook, false);
    server.instance.runtime.services.nodes.get('a')!.receive({ payload: 2 });
    await capture.waitFor('c');
  } finally {
    await server.dispose();
  }
});
