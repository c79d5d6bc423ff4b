import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { encryptNodeRedBlob } from '../../src/credentials/nodered-cipher.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { killRunnels, runCli, spawnRunnelWith } from '../helpers/process.js';
import { request } from '../helpers/server.js';

/**
 * A Node-RED user dir whose credentials were encrypted with a secret Runnel is not given: the
 * start refuses with one line naming the secret, and writes no key of its own.
 */

const FLOWS = [{ id: 't1', type: 'tab' }, { id: 'r1', type: 'http request', z: 't1', method: 'GET', url: 'http://127.0.0.1:9/', wires: [[]] }];
const SECRET = 'the secret Node-RED used';

describe('credentials no key opens refuse the start', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  after(async () => {
    killRunnels();
    await Promise.all(dirs.map(removeDir));
  });

  async function nodeRedDir(settings: string, runtime?: Record<string, unknown>): Promise<{ dir: string; creds: string }> {
    const dir = await tempDir('runnel-refusal-');
    dirs.push(dir);
    const userDir = path.join(dir, 'node-red');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'settings.js'), `module.exports = { uiPort: 0, flowFile: 'flows.json', logging: { console: { level: 'warn' } }${settings} };\n`);
    await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(FLOWS, null, 4));
    const creds = JSON.stringify({ $: encryptNodeRedBlob({ r1: { user: 'u', password: 'p' } }, SECRET) }, null, 4);
    await writeFile(path.join(userDir, 'flows_cred.json'), creds);
    if (runtime) await writeFile(path.join(userDir, '.config.runtime.json'), JSON.stringify(runtime, null, 4));
    return { dir: userDir, creds };
  }

  async function refused(userDir: string, pattern: RegExp): Promise<void> {
    const r = await runCli(['start', '--user-dir', userDir], { cwd: userDir });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr.trim(), pattern);
  }

  it('no credentialSecret and no generated key: exit 1, and no key is written', async () => {
    const { dir, creds } = await nodeRedDir('');
    await refused(dir, new RegExp(`^runnel: the credentials in ${path.join(dir, 'flows_cred.json')} are encrypted, but credentialSecret is not set .*: set credentialSecret in the settings file \\(settings\\.js\\) to the secret they were encrypted with`));
    assert.equal((await readdir(dir)).includes('.config.runtime.json'), false);
    assert.equal(await readFile(path.join(dir, 'flows_cred.json'), 'utf8'), creds);
  });

  it('a generated key that does not open them: exit 1, the files unchanged', async () => {
    const runtime = { _credentialSecret: 'another generated key' };
    const { dir, creds } = await nodeRedDir('', runtime);
    await refused(dir, /do not decrypt with the generated key \(_credentialSecret in \.config\.runtime\.json\): set credentialSecret/);
    assert.deepEqual(JSON.parse(await readFile(path.join(dir, '.config.runtime.json'), 'utf8')), runtime);
    assert.equal(await readFile(path.join(dir, 'flows_cred.json'), 'utf8'), creds);
  });

  it('credentialSecret false beside encrypted credentials: exit 1', async () => {
    const { dir } = await nodeRedDir(', credentialSecret: false');
    await refused(dir, /are encrypted and credentialSecret is false: set credentialSecret/);
  });

  it('with the secret in settings.js it starts and the node has its credentials', async () => {
    const { dir } = await nodeRedDir(`, credentialSecret: ${JSON.stringify(SECRET)}`);
    const run = await spawnRunnelWith(['start', '--user-dir', dir], dir);
    try {
      assert.deepEqual((await request(new URL('credentials/http-request/r1', run.url).href)).body, { user: 'u', has_password: true });
      assert.match(run.output(), /"credentialKey":"credentialSecret from [^"]*settings\.js"/);
    } finally {
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
    }
  });
});
