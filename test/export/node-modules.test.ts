import assert from 'node:assert/strict';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { ROOT, runCli } from '../helpers/process.js';
import { request, startServer } from '../helpers/server.js';

/**
 * `runnel export --out DIR` of a user dir whose flows use installed modules: the folder's
 * package.json lists them, so `npm install` there gives Node-RED the types the flows need (a real
 * Node-RED on such a folder: test-ecosystem/migration.test.ts).
 */

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'modules');

describe('runnel export --out lists the node modules for npm install', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map(removeDir)));

  it('lists each installed module at its installed version, a file: module at its absolute path, not a module pulled in as a dependency', async () => {
    const root = await tempDir('runnel-export-modules-');
    dirs.push(root);
    const userDir = path.join(root, 'user');
    await mkdir(path.join(userDir, 'node_modules'), { recursive: true });
    // As npm leaves a user dir: one module from the registry (a range in package.json), one from a
    // folder next to the user dir (a relative file: spec), one that came in as a dependency.
    await cp(path.join(FIXTURES, 'node-red-contrib-upper'), path.join(userDir, 'node_modules', 'node-red-contrib-upper'), { recursive: true });
    await cp(path.join(FIXTURES, 'node-red-contrib-shout'), path.join(root, 'shout'), { recursive: true });
    await cp(path.join(FIXTURES, 'node-red-contrib-shout'), path.join(userDir, 'node_modules', 'node-red-contrib-shout'), { recursive: true });
    await cp(path.join(FIXTURES, 'dep-nodes'), path.join(userDir, 'node_modules', 'dep-nodes'), { recursive: true });
    await writeFile(path.join(userDir, 'package.json'), JSON.stringify({
      name: 'node-red-project', private: true,
      dependencies: { 'node-red-contrib-upper': '^1.0.0', 'node-red-contrib-shout': 'file:../shout' },
    }));
    const server = await startServer({}, userDir);
    try {
      await deploy(server, [
        { id: 'u', type: 'upper-case', z: 't1', x: 1, y: 1, wires: [] },
        { id: 's', type: 'shout', z: 't1', x: 1, y: 1, wires: [] },
      ], { tab: 't1', api: 'v2' });
    } finally {
      await server.stop();
    }
    const out = path.join(root, 'for-node-red');
    const r = await runCli(['export', '--user-dir', userDir, '--out', out], { cwd: root, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\(\.config\.runtime\.json, flows\.json, flows_cred\.json, package\.json\); run npm install in \S+ \(its package\.json lists 2 node modules: node-red-contrib-\w+, node-red-contrib-\w+\), then start Node-RED with: node-red --userDir /);
    const manifest = JSON.parse(await readFile(path.join(out, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.deepEqual(manifest.dependencies, { 'node-red-contrib-upper': '1.0.0', 'node-red-contrib-shout': `file:${path.join(root, 'shout')}` });
    assert.ok(!(await readdir(out)).includes('node_modules'));
  });

  it("takes the user dir's .config.nodes.json along, so a node set disabled on Runnel stays disabled on Node-RED", async () => {
    const root = await tempDir('runnel-export-modules-');
    dirs.push(root);
    const userDir = path.join(root, 'user');
    await cp(path.join(FIXTURES, 'node-red-contrib-upper'), path.join(userDir, 'node_modules', 'node-red-contrib-upper'), { recursive: true });
    const server = await startServer({}, userDir);
    try {
      const off = await request(server.at('nodes/node-red-contrib-upper/upper'), { method: 'PUT', json: { enabled: false } });
      assert.equal(off.status, 200, off.text);
    } finally {
      await server.stop();
    }
    const out = path.join(root, 'for-node-red');
    const r = await runCli(['export', '--user-dir', userDir, '--out', out], { cwd: root, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /, \.config\.nodes\.json\)/);
    const flags = JSON.parse(await readFile(path.join(out, '.config.nodes.json'), 'utf8')) as Record<string, { nodes: Record<string, { enabled: boolean }> }>;
    assert.equal(flags['node-red-contrib-upper'].nodes.upper.enabled, false);
  });

  it('a user dir without node modules gets no package.json, and the summary says nothing of npm', async () => {
    const root = await tempDir('runnel-export-modules-');
    dirs.push(root);
    const userDir = path.join(root, 'user');
    const server = await startServer({}, userDir);
    await server.stop();
    const out = path.join(root, 'out');
    const r = await runCli(['export', '--user-dir', userDir, '--out', out], { cwd: root, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /npm install/);
    assert.ok(!(await readdir(out)).includes('package.json'));
  });
});
