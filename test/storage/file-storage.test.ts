import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RunnelError } from '../../src/errors.js';
import { createFileStorage } from '../../src/storage/file-storage.js';
import type { FlowNodeConfig } from '../../src/storage/types.js';
import { captureLog, makeTempDir, readJsonFile, removeDir, settingsFor, tempFilesIn } from './support.js';

const EMPTY_REV = '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const FLOWS_A: FlowNodeConfig[] = [
  { id: 't1', type: 'tab', label: 'One' },
  { id: 'n1', type: 'inject', z: 't1', wires: [['n2']] },
  { id: 'n2', type: 'debug', z: 't1', wires: [] },
];
const FLOWS_B: FlowNodeConfig[] = [{ id: 't1', type: 'tab', label: 'Two' }];

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
    root = await makeTempDir();
  });
  after(async () => {
    await removeDir(root);
  });

  it('creates the user dir and reads a missing flows file as an empty config', async () => {
    const { dir, storage } = await open();
    assert.deepEqual(await readdir(dir), []);
    assert.deepEqual(await storage.getFlows(), { flows: [], credentials: null, rev: EMPTY_REV });
    await storage.close();
  });

  it('computes rev as the SHA-256 of the compact JSON and writes a compact file by default', async () => {
    const { dir, storage } = await open();
    const { rev } = await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } } });
    assert.equal(rev, sha(JSON.stringify(FLOWS_A)));
    assert.equal(await readFile(path.join(dir, 'flows.json'), 'utf8'), JSON.stringify(FLOWS_A));
    assert.deepEqual(await readJsonFile(path.join(dir, 'flows_cred.json')), {
      $runnel: 1, rev, prevRev: EMPTY_REV, data: { plain: { n1: { a: 1 } } },
    });
    assert.deepEqual(await storage.getFlows(), { flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } }, rev });
    await storage.close();
  });

  it('pretty-prints both files with flowFilePretty, and the rev still hashes the compact form', async () => {
    const { dir, storage } = await open({ flowFilePretty: true, flowFile: 'my-flows.json' });
    const { rev } = await storage.saveFlows({ flows: FLOWS_A, credentials: null });
    assert.equal(rev, sha(JSON.stringify(FLOWS_A)));
    assert.equal(await readFile(path.join(dir, 'my-flows.json'), 'utf8'), JSON.stringify(FLOWS_A, null, 4));
    const cred = await readFile(path.join(dir, 'my-flows_cred.json'), 'utf8');
    assert.equal(cred, JSON.stringify({ $runnel: 1, rev, prevRev: EMPTY_REV, data: null }, null, 4));
    await storage.close();
    const again = createFileStorage(settingsFor(dir, { flowFile: 'my-flows.json' }), captureLog().log);
    await again.init();
    assert.equal((await again.getFlows()).rev, rev);
    await again.close();
  });

  it('saves when expectedRev matches and refuses a stale rev with 409, writing nothing', async () => {
    const { dir, storage } = await open();
    const first = await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: {} }, expectedRev: EMPTY_REV });
    const second = await storage.saveFlows({ flows: FLOWS_B, credentials: null, expectedRev: first.rev });
    assert.equal(second.rev, sha(JSON.stringify(FLOWS_B)));
    const names = ['flows.json', 'flows_cred.json', '.flows.json.backup', '.flows_cred.json.backup'];
    const before = await Promise.all(names.map((f) => readFile(path.join(dir, f), 'utf8')));
    await assert.rejects(
      storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { x: {} } }, expectedRev: first.rev }),
      (e: unknown) => {
        assert.ok(e instanceof RunnelError);
        assert.equal(e.code, 'version_mismatch');
        assert.equal(e.status, 409);
        assert.equal(e.message, `The flows have changed since rev ${first.rev} was read`);
        return true;
      },
    );
    assert.deepEqual(await Promise.all(names.map((f) => readFile(path.join(dir, f), 'utf8'))), before);
    assert.equal((await storage.getFlows()).rev, second.rev);
    await storage.close();
  });

  it('lets exactly one of two concurrent saves with the same expectedRev win', async () => {
    const { storage } = await open();
    const results = await Promise.allSettled([
      storage.saveFlows({ flows: FLOWS_A, credentials: null, expectedRev: EMPTY_REV }),
      storage.saveFlows({ flows: FLOWS_B, credentials: null, expectedRev: EMPTY_REV }),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected']);
    assert.equal((results[1] as PromiseRejectedResult).reason.code, 'version_mismatch');
    assert.deepEqual((await storage.getFlows()).flows, FLOWS_A);
    await storage.close();
  });

  it('serialises many concurrent saves without leaving temp files, ending on a matched pair', async () => {
    const { dir, storage } = await open();
    const saves = Array.from({ length: 20 }, (_, i) =>
      storage.saveFlows({ flows: [{ id: `n${i}`, type: 'tab' }], credentials: { plain: { [`n${i}`]: { k: i } } } }));
    await Promise.all(saves);
    assert.deepEqual(await tempFilesIn(dir), []);
    const cred = (await readJsonFile(path.join(dir, 'flows_cred.json'))) as { rev: string; data: unknown };
    const flows = (await readJsonFile(path.join(dir, 'flows.json'))) as FlowNodeConfig[];
    assert.deepEqual(flows, [{ id: 'n19', type: 'tab' }]);
    assert.equal(cred.rev, sha(JSON.stringify(flows)));
    assert.deepEqual(cred.data, { plain: { n19: { k: 19 } } });
    await storage.close();
  });

  it('keeps the stored credentials document when credentials is null but re-tags it with the new rev', async () => {
    const { dir, storage } = await open();
    await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { user: 'u' } } } });
    const { rev } = await storage.saveFlows({ flows: FLOWS_B, credentials: null });
    assert.deepEqual(await readJsonFile(path.join(dir, 'flows_cred.json')), {
      $runnel: 1, rev, prevRev: sha(JSON.stringify(FLOWS_A)), data: { plain: { n1: { user: 'u' } } },
    });
    assert.deepEqual((await storage.getFlows()).credentials, { plain: { n1: { user: 'u' } } });
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
    assert.equal(snap.rev, sha(JSON.stringify(FLOWS_B)));
    await storage.close();
  });

  it('hands out copies: mutating a snapshot or the saved array does not change storage', async () => {
    const { storage } = await open();
    const flows = structuredClone(FLOWS_A);
    await storage.saveFlows({ flows, credentials: { plain: { n1: { a: 1 } } } });
    flows[0]!.label = 'changed';
    const snap = await storage.getFlows();
    snap.flows.pop();
    (snap.credentials as { plain: Record<string, unknown> }).plain.n1 = {};
    assert.deepEqual(await storage.getFlows(), { flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } }, rev: sha(JSON.stringify(FLOWS_A)) });
    await storage.close();
  });

  it('round-trips sessions and the runtime config, keeping unknown keys', async () => {
    const { dir, storage } = await open();
    assert.deepEqual(await storage.getSessions(), []);
    assert.deepEqual(await storage.getRuntimeConfig(), {});
    const sessions = [{ tokenHash: sha('t'), username: 'admin', client: 'node-red-admin', scope: ['*'], expires: 1700000000000 }];
    await storage.saveSessions(sessions);
    await storage.saveRuntimeConfig({ _credentialSecret: 'abc', instanceId: 'i1', telemetry: { on: false } });
    await storage.close();
    const again = createFileStorage(settingsFor(dir), captureLog().log);
    await again.init();
    assert.deepEqual(await again.getSessions(), sessions);
    assert.deepEqual(await again.getRuntimeConfig(), { _credentialSecret: 'abc', instanceId: 'i1', telemetry: { on: false } });
    assert.deepEqual(await readJsonFile(path.join(dir, '.config.runtime.json')), { _credentialSecret: 'abc', instanceId: 'i1', telemetry: { on: false } });
    await again.close();
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

  it('reads _credentialSecret from a pre-1.1 Node-RED .config.json when .config.runtime.json is absent', async () => {
    const { dir, storage } = await open();
    await writeFile(path.join(dir, '.config.json'), JSON.stringify({ _credentialSecret: 'old', instanceId: 'x', nodes: {} }));
    assert.deepEqual(await storage.getRuntimeConfig(), { _credentialSecret: 'old', instanceId: 'x' });
    await storage.close();
  });

  it('close() waits for queued writes and refuses use afterwards', async () => {
    const { dir, storage } = await open();
    const pending = storage.saveFlows({ flows: FLOWS_B, credentials: null });
    await storage.close();
    assert.equal(await readFile(path.join(dir, 'flows.json'), 'utf8'), JSON.stringify(FLOWS_B));
    await pending;
    await assert.rejects(async () => storage.getFlows(), /storage is closed/);
  });
});
