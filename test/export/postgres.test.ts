import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { decryptNodeRedBlob } from '../../src/credentials/nodered-cipher.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { runCli } from '../helpers/process.js';
import { startServer } from '../helpers/server.js';

/** The export reads through the Storage interface: flows and credentials kept in PostgreSQL come out as Node-RED's files. */
describe('runnel export from PostgreSQL storage', { timeout: 120_000 }, () => {
  let pg: TestPostgres;
  let root: string;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('runnel-export-pg-');
  });
  after(async () => {
    await pg?.dispose();
    if (root) await removeDir(root);
  });

  it('writes the flows, the credentials under the generated key and that key for Node-RED', async () => {
    const storage = { type: 'postgres', url: pg.url, schema: 'export_test' };
    const server = await startServer({ storage }, path.join(root, 'user'));
    const flows = [{ id: 'r1', type: 'http request', z: 't1', method: 'GET', url: 'http://127.0.0.1:9/', x: 1, y: 1, wires: [[]] }];
    try {
      await deploy(server, flows, { tab: 't1', api: 'v2', credentials: { r1: { user: 'alice', password: 's3cret' } } });
    } finally {
      await server.stop();
    }
    const settingsFile = path.join(root, 'settings.json');
    await writeFile(settingsFile, JSON.stringify({ userDir: path.join(root, 'user'), storage }));
    const out = path.join(root, 'out');
    const r = await runCli(['export', '--settings', settingsFile, '--out', out], { cwd: root, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\(postgres storage\)/);
    assert.deepEqual((await readdir(out)).sort(), ['.config.runtime.json', 'flows.json', 'flows_cred.json']);
    assert.deepEqual(JSON.parse(await readFile(path.join(out, 'flows.json'), 'utf8')), [{ id: 't1', type: 'tab', label: 't1' }, ...flows]);
    const key = (JSON.parse(await readFile(path.join(out, '.config.runtime.json'), 'utf8')) as { _credentialSecret: string })._credentialSecret;
    assert.match(key, /^[0-9a-f]{64}$/);
    const creds = JSON.parse(await readFile(path.join(out, 'flows_cred.json'), 'utf8')) as { $: string };
    assert.deepEqual(decryptNodeRedBlob(creds.$, key), { r1: { user: 'alice', password: 's3cret' } });
  });
});
