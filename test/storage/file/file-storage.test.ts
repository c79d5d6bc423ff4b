import assert from 'node:assert/strict';
import { lstat, readFile, readdir, rename, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFileStorage } from '../../../src/storage/file/file-storage.js';
import { revOf } from '../../../src/storage/rev.js';
import { EMPTY_REV, FLOWS_A, FLOWS_B, storageContract } from '../contract.js';
import { queueContract } from '../queue-contract.js';
import { readJsonFile, settingsFor, tempFilesIn } from '../support.js';
import { tempDir, removeDir } from '../../helpers/dirs.js';
import { captureLog } from '../../helpers/log.js';

let contractRoot: string | undefined;
let places = 0;
storageContract({
  name: 'file',
  newPlace: async () => path.join((contractRoot ??= await tempDir()), `u${places++}`),
  create: (dir) => createFileStorage(settingsFor(dir), captureLog().log),
  dispose: async () => {
    if (contractRoot) await removeDir(contractRoot);
  },
});

let queueRoot: string | undefined;
queueContract({
  name: 'file',
  newPlace: async () => path.join((queueRoot ??= await tempDir()), `u${places++}`),
  create: (dir) => createFileStorage(settingsFor(dir), captureLog().log),
  dispose: async () => {
    if (queueRoot) await removeDir(queueRoot);
  },
});

/** What only the file backend does: Node-RED's file layout, backups, temp files, hand edits. */
describe('file storage', { timeout: 30_000 }, () => {
  let root: string;
  let n = 0;
  const open = async (extra: Record<string, unknown> = {}) => {
    const dir = path.join(root, `u${n++}`, 'nested');
    const captured = captureLog();
    const storage = createFileStorage(settingsFor(dir, extra), captured.log);
    await storage.init();
    return { dir, storage, captured };
  };

  before(async () => {
    root = await tempDir();
  });
  after(async () => {
    await removeDir(root);
  });

  it('creates the user dir and writes nothing until something is saved', async () => {
    const { dir, storage } = await open();
    assert.deepEqual(await readdir(dir), []);
    assert.deepEqual(await storage.getFlows(), { flows: [], credentials: null, rev: EMPTY_REV });
    await storage.close();
  });

  it('writes a compact flows file and a credentials file tied to its rev', async () => {
    const { dir, storage } = await open();
    const { rev } = await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } } });
    assert.equal(await readFile(path.join(dir, 'flows.json'), 'utf8'), JSON.stringify(FLOWS_A));
    assert.deepEqual(await readJsonFile(path.join(dir, 'flows_cred.json')), {
      $runnel: 1, rev, prevRev: EMPTY_REV, data: { plain: { n1: { a: 1 } } },
    });
    await storage.close();
  });

  it('pretty-prints both files with flowFilePretty, and the rev still hashes the compact form', async () => {
    const { dir, storage } = await open({ flowFilePretty: true, flowFile: 'my-flows.json' });
    const { rev } = await storage.saveFlows({ flows: FLOWS_A, credentials: null });
    assert.equal(rev, revOf(FLOWS_A));
    assert.equal(await readFile(path.join(dir, 'my-flows.json'), 'utf8'), JSON.stringify(FLOWS_A, null, 4));
    const cred = await readFile(path.join(dir, 'my-flows_cred.json'), 'utf8');
    assert.equal(cred, JSON.stringify({ $runnel: 1, rev, prevRev: EMPTY_REV, data: null }, null, 4));
    await storage.close();
    const again = createFileStorage(settingsFor(dir, { flowFile: 'my-flows.json' }), captureLog().log);
    await again.init();
    assert.equal((await again.getFlows()).rev, rev);
    await again.close();
  });

  it('touches no file, backups included, when a stale rev is refused', async () => {
    const { dir, storage } = await open();
    const first = await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: {} } });
    await storage.saveFlows({ flows: FLOWS_B, credentials: null });
    const names = ['flows.json', 'flows_cred.json', '.flows.json.backup', '.flows_cred.json.backup'];
    const before = await Promise.all(names.map((f) => readFile(path.join(dir, f), 'utf8')));
    await assert.rejects(storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { x: {} } }, expectedRev: first.rev }), { code: 'version_mismatch' });
    assert.deepEqual(await Promise.all(names.map((f) => readFile(path.join(dir, f), 'utf8'))), before);
    await storage.close();
  });

  it('leaves no temp files after many concurrent saves, and the files on disk are a matched pair', async () => {
    const { dir, storage } = await open();
    await Promise.all(Array.from({ length: 20 }, (_, i) =>
      storage.saveFlows({ flows: [{ id: `n${i}`, type: 'tab' }], credentials: { plain: { [`n${i}`]: { k: i } } } })));
    assert.deepEqual(await tempFilesIn(dir), []);
    const cred = (await readJsonFile(path.join(dir, 'flows_cred.json'))) as { rev: string; data: unknown };
    const flows = (await readJsonFile(path.join(dir, 'flows.json'))) as unknown[];
    assert.deepEqual(flows, [{ id: 'n19', type: 'tab' }]);
    assert.equal(cred.rev, revOf(flows));
    assert.deepEqual(cred.data, { plain: { n19: { k: 19 } } });
    await storage.close();
  });

  it('re-tags the kept credentials document with the new rev when credentials is null', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { user: 'u' } } } });
    const { rev } = await storage.saveFlows({ flows: FLOWS_B, credentials: null });
    assert.deepEqual(await readJsonFile(path.join(dir, 'flows_cred.json')), {
      $runnel: 1, rev, prevRev: revOf(FLOWS_A), data: { plain: { n1: { user: 'u' } } },
    });
    await storage.close();
  });

  it('copies the previous files to dot-named backups on every save', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { a: {} } } });
    const credA = await readFile(path.join(dir, 'flows_cred.json'), 'utf8');
    await storage.saveFlows({ flows: FLOWS_B, credentials: { plain: { b: {} } } });
    assert.equal(await readFile(path.join(dir, '.flows.json.backup'), 'utf8'), JSON.stringify(FLOWS_A));
    assert.equal(await readFile(path.join(dir, '.flows_cred.json.backup'), 'utf8'), credA);
    await storage.close();
  });

  it('keeps the backup apart from the new file: a later in-place edit of flows.json leaves it alone', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: null });
    await storage.saveFlows({ flows: FLOWS_B, credentials: null });
    const [current, backup] = await Promise.all([stat(path.join(dir, 'flows.json')), stat(path.join(dir, '.flows.json.backup'))]);
    assert.notEqual(current.ino, backup.ino);
    await storage.close();
    await writeFile(path.join(dir, 'flows.json'), '[]');
    assert.equal(await readFile(path.join(dir, '.flows.json.backup'), 'utf8'), JSON.stringify(FLOWS_A));
  });

  it('backs up the content of a flows file that is a symbolic link, not the link', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: null });
    await rename(path.join(dir, 'flows.json'), path.join(dir, 'real-flows.json'));
    await symlink(path.join(dir, 'real-flows.json'), path.join(dir, 'flows.json'));
    await storage.saveFlows({ flows: FLOWS_B, credentials: null });
    const backup = path.join(dir, '.flows.json.backup');
    assert.equal((await lstat(backup)).isSymbolicLink(), false);
    await writeFile(path.join(dir, 'real-flows.json'), '[]');
    assert.equal(await readFile(backup, 'utf8'), JSON.stringify(FLOWS_A));
    await storage.close();
  });

  it('removes temp files left by a crash at init, and nothing else', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: null });
    await storage.close();
    const leftovers = ['.flows.json.0123456789ab.runnel-tmp', '.flows_cred.json.abcdef012345.runnel-tmp', '.sessions.json.00000000ffff.runnel-tmp'];
    for (const name of leftovers) await writeFile(path.join(dir, name), '[{"half":');
    await writeFile(path.join(dir, 'notes.runnel-tmp.txt'), 'mine');
    const again = createFileStorage(settingsFor(dir), captureLog().log);
    await again.init();
    assert.deepEqual(await tempFilesIn(dir), []);
    assert.equal(await readFile(path.join(dir, 'notes.runnel-tmp.txt'), 'utf8'), 'mine');
    assert.deepEqual((await again.getFlows()).flows, FLOWS_A);
    await again.close();
  });

  it('sees a flows file changed on disk behind its back (for a reload deploy)', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: null });
    await writeFile(path.join(dir, 'flows.json'), JSON.stringify(FLOWS_B, null, 2));
    const snap = await storage.getFlows();
    assert.deepEqual(snap.flows, FLOWS_B);
    assert.equal(snap.rev, revOf(FLOWS_B));
    await storage.close();
  });

  it('keeps the runtime config in .config.runtime.json, as Node-RED does', async () => {
    const { dir, storage } = await open();
    await storage.saveRuntimeConfig({ _credentialSecret: 'abc', instanceId: 'i1' });
    assert.deepEqual(await readJsonFile(path.join(dir, '.config.runtime.json')), { _credentialSecret: 'abc', instanceId: 'i1' });
    await storage.close();
  });

  it('falls back to the sessions backup when the sessions file is unreadable', async () => {
    const { dir, storage, captured } = await open();
    const one = [{ tokenHash: 'a', username: 'u', client: 'c', scope: ['read'], expires: 1 }];
    await storage.saveSessions(one);
    await storage.saveSessions([]);
    await writeFile(path.join(dir, '.sessions.json'), '[{"tokenHa');
    assert.deepEqual(await storage.getSessions(), one);
    assert.deepEqual(captured.messages(50), ['Unreadable storage file ignored']);
    await storage.close();
  });

  it("keeps a copy of Node-RED's credentials file when it first rewrites it, and only then", async () => {
    const { dir, storage } = await open();
    await storage.close();
    const nodeRed = JSON.stringify({ $: 'ab'.repeat(16) + 'bm9kZS1yZWQ=' }, null, 4);
    await writeFile(path.join(dir, 'flows.json'), JSON.stringify(FLOWS_A));
    await writeFile(path.join(dir, 'flows_cred.json'), nodeRed);
    const again = createFileStorage(settingsFor(dir), captureLog().log);
    await again.init();
    const copy = path.join(dir, 'flows_cred.json.node-red.bak');
    await assert.rejects(readFile(copy), { code: 'ENOENT' }, 'loading writes nothing');
    await again.saveFlows({ flows: FLOWS_B, credentials: { plain: { n1: { a: 1 } } } });
    assert.equal(await readFile(copy, 'utf8'), nodeRed);
    await again.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { a: 2 } } } });
    assert.equal(await readFile(copy, 'utf8'), nodeRed, 'a Runnel file is not copied over it');
    await again.close();
  });

  it('puts a new credentials file next to a flows file in a subfolder, as Node-RED 5 does', async () => {
    const { dir, storage } = await open({ flowFile: 'sub/my.json' });
    const { rev } = await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } } });
    assert.deepEqual(await readJsonFile(path.join(dir, 'sub', 'my_cred.json')), { $runnel: 1, rev, prevRev: EMPTY_REV, data: { plain: { n1: { a: 1 } } } });
    assert.equal((await readdir(dir)).includes('my_cred.json'), false);
    await storage.close();
  });

  it('keeps using the credentials file Node-RED 4 left in the user dir for a flows file in a subfolder', async () => {
    const { dir, storage } = await open();
    await storage.close();
    const nodeRed = JSON.stringify({ n1: { a: 'from-node-red-4' } });
    await writeFile(path.join(dir, 'my_cred.json'), nodeRed);
    const again = createFileStorage(settingsFor(dir, { flowFile: 'sub/my.json' }), captureLog().log);
    await again.init();
    assert.equal(again.credentialsFile, path.join(dir, 'my_cred.json'));
    assert.deepEqual((await again.getFlows()).credentials, { n1: { a: 'from-node-red-4' } });
    const { rev } = await again.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { a: 2 } } } });
    assert.equal((await readJsonFile(path.join(dir, 'my_cred.json')) as { rev: string }).rev, rev);
    await assert.rejects(readFile(path.join(dir, 'sub', 'my_cred.json')), { code: 'ENOENT' });
    await again.close();
  });

  it("reads Node-RED's sessions (an object by token) as none, without an error", async () => {
    const { dir, storage, captured } = await open();
    await writeFile(path.join(dir, '.sessions.json'), JSON.stringify({ tok: { user: 'admin', client: 'node-red-editor', scope: ['*'], accessToken: 'tok', expires: Date.now() + 60_000 } }));
    assert.deepEqual(await storage.getSessions(), []);
    assert.deepEqual(captured.messages(50), []);
    await storage.close();
  });

  it('makes no Node-RED copy in a user dir Runnel started', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } } });
    await storage.saveFlows({ flows: FLOWS_B, credentials: { plain: { n1: { a: 2 } } } });
    assert.equal((await readdir(dir)).some((f) => f.endsWith('.node-red.bak')), false);
    await storage.close();
  });

  it('reads _credentialSecret from a pre-1.1 Node-RED .config.json when .config.runtime.json is absent', async () => {
    const { dir, storage } = await open();
    await writeFile(path.join(dir, '.config.json'), JSON.stringify({ _credentialSecret: 'old', instanceId: 'x', nodes: {} }));
    assert.deepEqual(await storage.getRuntimeConfig(), { _credentialSecret: 'old', instanceId: 'x' });
    await storage.close();
  });
});
