import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { TAB, capture, flowNode } from './support.js';
import { tempDir, removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

/** Writes `files` (path -> text) under `root`. */
async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
}

describe('compat: RED.import resolves like RED.require', { timeout: 30_000 }, () => {
  let server: TestServer;
  let cap: Capture;
  let root: string;

  before(async () => {
    root = await tempDir();
    // A module with its own dependencies (one import-only ESM package, one CommonJS) and a
    // dependency only the user directory has; built here because node_modules is never committed.
    const mod = path.join(root, 'nodes', 'node-red-contrib-compat-import');
    await writeTree(mod, {
      'package.json': JSON.stringify({ name: 'node-red-contrib-compat-import', version: '1.0.0', 'node-red': { nodes: { importer: 'importer.js' } } }),
      'importer.js': `module.exports = async function (RED) {
  const esm = await RED.import('compat-esm-dep');
  const cjs = await RED.import('compat-cjs-dep');
  const user = await RED.import('compat-user-dep');
  const fs = await RED.import('node:fs');
  const local = await RED.import('./lib/local.mjs');
  RED.nodes.registerType('compat-import', function (config) {
    RED.nodes.createNode(this, config);
    this.on('input', (msg, send, done) => {
      msg.payload = [esm.value, cjs.default.value, user.value, typeof fs.readFileSync, local.value];
      send(msg);
      done();
    });
  });
};`,
      'lib/local.mjs': 'export const value = "local";',
      'node_modules/compat-esm-dep/package.json': JSON.stringify({ name: 'compat-esm-dep', version: '1.0.0', type: 'module', exports: { import: './index.js' } }),
      'node_modules/compat-esm-dep/index.js': 'export const value = "esm";',
      'node_modules/compat-cjs-dep/package.json': JSON.stringify({ name: 'compat-cjs-dep', version: '1.0.0', main: 'main.js' }),
      'node_modules/compat-cjs-dep/main.js': 'module.exports = { value: "cjs" };',
    });
    const userDir = path.join(root, 'user');
    await writeTree(userDir, {
      'node_modules/compat-user-dep/package.json': JSON.stringify({ name: 'compat-user-dep', version: '1.0.0', main: 'index.js' }),
      'node_modules/compat-user-dep/index.js': 'exports.value = "user";',
    });
    server = await startServer({ nodesDir: [path.join(root, 'nodes')] }, userDir);
    cap = installCapture(server);
    await deploy(server, [flowNode('imp', 'compat-import', [['cap']]), capture('cap', 'imported')], { tab: TAB });
  });
  after(async () => {
    await server?.dispose();
    await removeDir(root);
  });

  it("finds the module's own dependencies (ESM and CommonJS), the user directory's, built-ins and relative files", async () => {
    assert.ok(server.instance.runtime.services.nodes.get('imp'), `the set did not load:\n${server.logs.filter((l) => l.includes('failed to load')).join('\n')}`);
    server.instance.runtime.services.nodes.get('imp')!.receive({});
    const [msg] = await cap.waitFor('imported');
    assert.deepEqual(msg.payload, ['esm', 'cjs', 'user', 'function', 'local']);
  });
});
