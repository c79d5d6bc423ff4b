import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { adminAuth, login, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { copyFixture } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';

const CLI = createRequire(import.meta.url).resolve('node-red-admin/node-red-admin.js');

/** The real node-red-admin CLI (npm), with its config (target and token) in a temp dir. */
describe('node-red-admin against Runnel', { timeout: 120_000 }, () => {
  let server: TestServer;
  let work: string;
  let cliDir: string;
  const admin = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args, '--userDir', cliDir, '--json'], { timeout: 60_000 });
    return JSON.parse(stdout);
  };

  before(async () => {
    work = await tempDir('runnel-cli-');
    cliDir = path.join(work, 'cli');
    server = await startServer({ adminAuth: adminAuth() });
    const token = await login(server);
    await copyFixture('node-red-contrib-shout', work);
    await mkdir(cliDir);
    await writeFile(path.join(cliDir, '.cli-config.json'), JSON.stringify({ target: server.url.replace(/\/$/, ''), tokens: { access_token: token } }));
  });
  after(async () => {
    await server.dispose();
    await removeDir(work);
  });

  it('list and info show the core module as node-red with its sets', async () => {
    const list = (await admin('list')) as { id: string; module: string }[];
    assert.ok(list.some((s) => s.id === 'node-red/inject' && s.module === 'node-red'));
    const core = await admin('info', 'node-red');
    assert.equal(core.name, 'node-red');
    assert.equal(core.version, '5.0.7');
    assert.ok(core.nodes.some((s: { id: string }) => s.id === 'node-red/split'));
    const set = await admin('info', 'node-red/split');
    assert.deepEqual([...set.types].sort(), ['join', 'split']);
    assert.equal(set.enabled, true);
  });

  it('install, disable, enable and remove a module', async () => {
    const installed = await admin('install', path.join(work, 'node-red-contrib-shout'));
    assert.equal(installed.name, 'node-red-contrib-shout');
    assert.deepEqual(installed.nodes[0].types, ['shout']);
    assert.equal((await admin('disable', 'node-red-contrib-shout/shout')).enabled, false);
    assert.equal((await admin('enable', 'node-red-contrib-shout/shout')).enabled, true);
    assert.deepEqual(await admin('remove', 'node-red-contrib-shout'), { message: 'Uninstalled node-red-contrib-shout' });
    assert.equal(server.instance.runtime.registry.modules.has('node-red-contrib-shout'), false);
  });
});
