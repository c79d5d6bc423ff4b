import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, request } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { tempDir, removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

/** A module shipping its own `json` type, as node-red-node-rbe ships `rbe` beside Node-RED's core. */
async function overridingModule(dir: string): Promise<string> {
  const mod = path.join(dir, 'node-red-contrib-json-override');
  await mkdir(mod, { recursive: true });
  await writeFile(path.join(mod, 'package.json'), JSON.stringify({ name: 'node-red-contrib-json-override', version: '1.0.0', 'node-red': { nodes: { json: 'json.js' } } }));
  await writeFile(
    path.join(mod, 'json.js'),
    `module.exports = function (RED) {
      function J(config) { RED.nodes.createNode(this, config); this.on('input', (msg, send, done) => { msg.payload = 'from-module'; send(msg); done(); }); }
      RED.nodes.registerType('json', J);
    };`,
  );
  return mod;
}

test('an installed module may replace a built-in type; deployed nodes switch over and back', async () => {
  const dir = await tempDir();
  const server = await startServer();
  const capture = installCapture(server);
  try {
    const flows = [
      { id: 't1', type: 'tab' },
      { id: 'j', type: 'json', z: 't1', x: 1, y: 1, wires: [['out']] },
      { id: 'out', type: 'test-capture', name: 'out', z: 't1', x: 1, y: 1, wires: [] },
    ];
    await deploy(server, flows);
    const send = () => server.instance.runtime.services.nodes.get('j')!.receive({ payload: '{"a":1}' });
    send();
    assert.deepEqual((await capture.waitFor('out', 1))[0].payload, { a: 1 });

    const installed = await request(server.at('nodes'), { method: 'POST', json: { module: await overridingModule(dir) } });
    assert.equal(installed.status, 200, installed.text);
    assert.deepEqual(installed.body.nodes[0].types, ['json']);
    const core = (await request(server.at('nodes/node-red'))).body.nodes.find((s: { name: string }) => s.name === 'JSON');
    assert.deepEqual(core.types, []);
    await new Promise((r) => setTimeout(r, 100));
    send();
    assert.equal((await capture.waitFor('out', 2))[1].payload, 'from-module');

    assert.equal((await request(server.at('nodes/node-red-contrib-json-override'), { method: 'DELETE' })).status, 400, 'in use');
    await deploy(server, flows.filter((n) => n.id !== 'j'));
    assert.equal((await request(server.at('nodes/node-red-contrib-json-override'), { method: 'DELETE' })).status, 204);
    await deploy(server, flows);
    send();
    assert.deepEqual((await capture.waitFor('out', 3))[2].payload, { a: 1 }, 'the built-in json is back');
  } finally {
    await server.dispose();
    await removeDir(dir);
  }
});
