import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { decryptNodeRedBlob } from '../../src/credentials/nodered-cipher.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { runMain } from '../helpers/process.js';
import { eventually, request, startServer } from '../helpers/server.js';

/**
 * `runnel export --format node-red` on user dirs Runnel wrote (the round trip through a real
 * Node-RED is test-ecosystem/migration.test.ts): what each file holds, and every refusal as one
 * line with exit 1.
 */

const FLOWS = [{ id: 'r1', type: 'http request', z: 't1', method: 'GET', url: 'http://127.0.0.1:9/', x: 1, y: 1, wires: [[]] }];
const CREDS = { r1: { user: 'alice', password: 's3cret' } };

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;

describe('runnel export --format node-red', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map(removeDir)));

  /** A user dir Runnel has deployed to (its own credentials format), with `settings` as settings.json. */
  async function runnelDir(settings: Record<string, unknown>): Promise<{ root: string; userDir: string; settingsFile: string }> {
    const root = await tempDir('runnel-export-');
    dirs.push(root);
    const userDir = path.join(root, 'user');
    const server = await startServer(settings, userDir);
    try {
      await deploy(server, FLOWS, { tab: 't1', api: 'v2', credentials: CREDS });
    } finally {
      await server.stop();
    }
    const settingsFile = path.join(root, 'settings.json');
    await writeFile(settingsFile, JSON.stringify({ userDir, ...settings }));
    return { root, userDir, settingsFile };
  }

  // In this process: each export would otherwise start Node.js and load the runtime (bin/runnel.js is main and process.exit).
  const exportCli = (args: string[]) => runMain(['export', ...args]);

  it('in place with the generated key: only the credentials file changes, to Node-RED\'s format under that key', async () => {
    const { userDir } = await runnelDir({});
    const flowsBefore = await readFile(path.join(userDir, 'flows.json'), 'utf8');
    const runnelCreds = await readFile(path.join(userDir, 'flows_cred.json'), 'utf8');
    const r = await exportCli(['--format', 'node-red', '--user-dir', userDir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout, `runnel: exporting ${userDir} (file storage) for Node-RED into ${userDir}\n`
      + `runnel: exported 2 flow nodes and the credentials of 1 node (flows_cred.json); start Node-RED with: node-red --userDir ${userDir}\n`);
    const key = (await readJson(path.join(userDir, '.config.runtime.json')))._credentialSecret as string;
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(userDir, 'flows_cred.json'))).$ as string, key), CREDS);
    assert.equal(await readFile(path.join(userDir, 'flows.json'), 'utf8'), flowsBefore);
    assert.equal(await readFile(path.join(userDir, '.flows_cred.json.backup'), 'utf8'), runnelCreds, 'Runnel\'s file is the backup');
    // Runnel reads the exported dir as it reads any Node-RED user dir.
    const again = await startServer({}, userDir);
    try {
      assert.deepEqual((await request(again.at('credentials/http-request/r1'))).body, { user: 'alice', has_password: true });
    } finally {
      await again.stop();
    }
  });

  it('--out with the generated key writes the flows, the credentials, the key and the file context', async () => {
    const context = { default: { module: 'memory' }, file: { module: 'localfilesystem' } };
    const { root, userDir, settingsFile } = await runnelDir({ contextStorage: context });
    const server = await startServer({ contextStorage: context }, userDir);
    try {
      await deploy(server, [...FLOWS, { id: 'fn', type: 'function', z: 't1', func: "global.set('kept', 42, 'file'); return msg;", x: 1, y: 1, wires: [] },
        { id: 'go', type: 'inject', z: 't1', once: true, onceDelay: 0, x: 1, y: 1, wires: [['fn']] }], { tab: 't1', api: 'v2' });
      await eventually(async () => (await request(server.at('context/global/kept?store=file'))).body.msg === '42', 30_000);
    } finally {
      await server.stop();
    }
    const out = path.join(root, 'for-node-red');
    const r = await exportCli(['--settings', settingsFile, '--out', out]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /exported 4 flow nodes and the credentials of 1 node \(\.config\.runtime\.json, flows\.json, flows_cred\.json, context\/\)/);
    assert.deepEqual((await readdir(out)).sort(), ['.config.runtime.json', 'context', 'flows.json', 'flows_cred.json']);
    const key = (await readJson(path.join(userDir, '.config.runtime.json')))._credentialSecret;
    assert.deepEqual(await readJson(path.join(out, '.config.runtime.json')), { _credentialSecret: key });
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(out, 'flows_cred.json'))).$ as string, key as string), CREDS);
    assert.deepEqual(JSON.parse(await readFile(path.join(out, 'flows.json'), 'utf8')), JSON.parse(await readFile(path.join(userDir, 'flows.json'), 'utf8')));
    assert.deepEqual(await readJson(path.join(out, 'context', 'global', 'global.json')), { kept: 42 });
  });

  it('--out with credentialSecret from a JSON settings file says Node-RED needs the same secret', async () => {
    const { root, settingsFile } = await runnelDir({ credentialSecret: 'mine' });
    const out = path.join(root, 'out');
    const r = await exportCli(['--settings', settingsFile, '--out', out]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`runnel: note: Node-RED needs the same credentialSecret: set it in its settings\\.js as in ${settingsFile}\n$`));
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(out, 'flows_cred.json'))).$ as string, 'mine'), CREDS);
    assert.equal((await readdir(out)).includes('.config.runtime.json'), false);
  });

  it('credentialSecret false exports the credentials unencrypted, as Node-RED keeps them then', async () => {
    const { root, settingsFile } = await runnelDir({ credentialSecret: false });
    const out = path.join(root, 'out');
    const r = await exportCli(['--settings', settingsFile, '--out', out]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(await readJson(path.join(out, 'flows_cred.json')), CREDS);
  });

  it('--out copies the user dir\'s settings.js in use with the generated key too (Node-RED there keeps its adminAuth)', async () => {
    const { root, userDir } = await runnelDir({});
    const settingsJs = `module.exports = { adminAuth: { type: 'credentials', users: [] }, logging: { console: { level: 'warn' } } };\n`;
    await writeFile(path.join(userDir, 'settings.js'), settingsJs);
    const out = path.join(root, 'out');
    const r = await exportCli(['--user-dir', userDir, '--out', out]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual((await readdir(out)).sort(), ['.config.runtime.json', 'flows.json', 'flows_cred.json', 'settings.js']);
    assert.equal(await readFile(path.join(out, 'settings.js'), 'utf8'), settingsJs);
    const key = (await readJson(path.join(userDir, '.config.runtime.json')))._credentialSecret as string;
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(out, 'flows_cred.json'))).$ as string, key), CREDS);
  });

  it('a flowFile in a subfolder: the credentials are written to the user dir, where Node-RED 4 reads them, in place and with --out', async () => {
    const { root, userDir, settingsFile } = await runnelDir({ flowFile: 'sub/my.json' });
    const key = (await readJson(path.join(userDir, '.config.runtime.json')))._credentialSecret as string;
    const r = await exportCli(['--settings', settingsFile]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(userDir, 'my_cred.json'))).$ as string, key), CREDS);
    const out = path.join(root, 'out');
    const o = await exportCli(['--settings', settingsFile, '--out', out]);
    assert.equal(o.code, 0, o.stdout + o.stderr);
    assert.match(o.stdout, /\(\.config\.runtime\.json, sub\/my\.json, my_cred\.json\)/);
    assert.deepEqual(JSON.parse(await readFile(path.join(out, 'sub', 'my.json'), 'utf8')), JSON.parse(await readFile(path.join(userDir, 'sub', 'my.json'), 'utf8')));
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(out, 'my_cred.json'))).$ as string, key), CREDS);
  });

  it('a flowFile outside the user dir: --out keeps only its name, and writes nothing outside the folder', async () => {
    const { root, userDir, settingsFile } = await runnelDir({ flowFile: '../elsewhere/f.json' });
    const elsewhere = path.join(root, 'elsewhere');
    const before = (await readdir(elsewhere)).sort();
    const key = (await readJson(path.join(userDir, '.config.runtime.json')))._credentialSecret as string;
    const out = path.join(root, 'out');
    const r = await exportCli(['--settings', settingsFile, '--out', out]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual((await readdir(out)).sort(), ['.config.runtime.json', 'f.json', 'f_cred.json']);
    assert.deepEqual(decryptNodeRedBlob((await readJson(path.join(out, 'f_cred.json'))).$ as string, key), CREDS);
    assert.deepEqual((await readdir(elsewhere)).sort(), before);
  });

  it('refuses with one line and exit 1: unknown format, no such user dir, unwritable folder, storage unreachable, no key', async () => {
    const { root, userDir, settingsFile } = await runnelDir({});
    await writeFile(path.join(root, 'a-file'), '');
    await writeFile(path.join(root, 'pg.json'), JSON.stringify({ userDir, storage: { type: 'postgres', url: 'postgresql://someone:hunter2@127.0.0.1:1/db' } }));
    const cases: [string[], RegExp][] = [
      [['--format', 'csv', '--user-dir', userDir], /^runnel: export: unknown format "csv": the one format is node-red$/],
      [['--user-dir', path.join(root, 'nowhere')], /^runnel: export: the user dir .*nowhere does not exist/],
      [['--settings', settingsFile, '--out', path.join(root, 'a-file', 'out')], /^runnel: export: cannot write to .*a-file\/out: ENOTDIR/],
      [['--settings', path.join(root, 'pg.json')], /^runnel: export: cannot read the storage: .*ECONNREFUSED/],
    ];
    for (const [args, pattern] of cases) {
      const r = await exportCli(args);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr.trim(), pattern);
      assert.doesNotMatch(r.stderr, /hunter2/);
    }
    const misplaced = await runMain(['start', '--user-dir', userDir, '--out', path.join(root, 'x')]);
    assert.equal(misplaced.code, 1);
    assert.match(misplaced.stderr, /^runnel: --format and --out are options of runnel export\n/);
    // The generated key gone: the credentials are left as they are, and no new key is written.
    const runtime = path.join(userDir, '.config.runtime.json');
    const creds = await readFile(path.join(userDir, 'flows_cred.json'), 'utf8');
    await writeFile(runtime, '{}');
    const r = await exportCli(['--user-dir', userDir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^runnel: export: the credentials in .*flows_cred\.json are encrypted, but credentialSecret is not set/);
    assert.deepEqual(await readJson(runtime), {});
    assert.equal(await readFile(path.join(userDir, 'flows_cred.json'), 'utf8'), creds);
  });
});
