import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { TAB, capture, flowNode } from './support.js';
import { tempDir, removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

/** A node that runs one RED.settings operation per message and reports what it saw. */
const MODULE = `module.exports = function (RED) {
  RED.nodes.registerType('compat-settings', function (config) {
    RED.nodes.createNode(this, config);
    this.on('input', async (msg, send, done) => {
      const report = {};
      try {
        if (msg.op === 'set') await RED.settings.set(msg.name, msg.value);
        if (msg.op === 'delete') await RED.settings.delete(msg.name);
      } catch (err) {
        report.error = err.message;
      }
      report.value = RED.settings.get(msg.name);
      report.property = RED.settings[msg.name];
      report.available = RED.settings.available();
      msg.payload = report;
      send(msg);
      done();
    });
  });
};`;

describe('compat: RED.settings.set and delete', { timeout: 30_000 }, () => {
  let root: string;
  let userDir: string;
  let nodesDir: string;
  let server: TestServer | undefined;

  const boot = async () => {
    server = await startServer({ nodesDir: [nodesDir], httpNodeRoot: '/api' }, userDir);
    const cap = installCapture(server);
    await deploy(server, [flowNode('s', 'compat-settings', [['cap']]), capture('cap', 'settings')], { tab: TAB });
    let seen = 0;
    return async (msg: Record<string, unknown>) => {
      server!.instance.runtime.services.nodes.get('s')!.receive(msg);
      seen++;
      return (await cap.waitFor('settings', seen))[seen - 1].payload;
    };
  };
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };

  before(async () => {
    root = await tempDir();
    userDir = path.join(root, 'user');
    nodesDir = path.join(root, 'nodes');
    await mkdir(path.join(nodesDir, 'node-red-contrib-compat-settings'), { recursive: true });
    await writeFile(path.join(nodesDir, 'node-red-contrib-compat-settings', 'package.json'),
      JSON.stringify({ name: 'node-red-contrib-compat-settings', version: '1.0.0', 'node-red': { nodes: { settings: 'settings.js' } } }));
    await writeFile(path.join(nodesDir, 'node-red-contrib-compat-settings', 'settings.js'), MODULE);
  });
  after(async () => {
    await stop();
    await removeDir(root);
  });

  it('keeps values the settings file does not set, across a restart, and refuses the ones it sets', async () => {
    let ask = await boot();
    assert.deepEqual(await ask({ op: 'set', name: 'compatStored', value: { a: 1 } }), { value: { a: 1 }, property: { a: 1 }, available: true });
    assert.deepEqual(await ask({ op: 'set', name: 'httpNodeRoot', value: '/x' }), {
      error: "Property 'httpNodeRoot' is read-only", value: '/api', property: '/api', available: true,
    });
    const hidden = (await ask({ op: 'set', name: 'credentialSecret', value: 'stolen' })) as Record<string, unknown>;
    assert.equal(hidden.error, "Property 'credentialSecret' is read-only");
    assert.equal(hidden.value, undefined, 'secret settings stay invisible');
    await stop();

    const stored = JSON.parse(await readFile(path.join(userDir, '.config.runtime.json'), 'utf8'));
    assert.deepEqual(stored.settings, { compatStored: { a: 1 } });
    ask = await boot();
    assert.deepEqual(await ask({ op: 'get', name: 'compatStored' }), { value: { a: 1 }, property: { a: 1 }, available: true });
    assert.deepEqual(await ask({ op: 'delete', name: 'compatStored' }), { value: undefined, property: undefined, available: true });
    await stop();

    ask = await boot();
    assert.deepEqual(await ask({ op: 'get', name: 'compatStored' }), { value: undefined, property: undefined, available: true });
  });
});
