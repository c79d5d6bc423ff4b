import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encryptNodeRedBlob } from '../../src/credentials/cipher.js';
import { resolveCredentialKey } from '../../src/credentials/key.js';
import { CredentialStore } from '../../src/credentials/store.js';
import { createFileStorage } from '../../src/storage/file/file-storage.js';
import { revOf } from '../../src/storage/rev.js';
import { readJsonFile, settingsFor } from '../storage/support.js';
import { tempDir, removeDir } from '../helpers/dirs.js';
import { captureLog } from '../helpers/log.js';

const SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
const FLOWS = [
  { id: 'tab1', type: 'tab', label: 'Flow 1', disabled: false, info: '' },
  { id: 'req1', type: 'http request', z: 'tab1', name: '', method: 'GET', url: 'http://example.test', wires: [[]] },
];
const CREDS = { req1: { user: 'nr-user', password: 'nr-password-123' } };
const definitionOf = (type: string) =>
  type === 'http request' ? { user: { type: 'text' as const }, password: { type: 'password' as const } } : undefined;

describe('a Node-RED user dir', { timeout: 30_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
    await writeFile(path.join(dir, 'flows.json'), JSON.stringify(FLOWS, null, 4));
    await writeFile(path.join(dir, 'flows_cred.json'), JSON.stringify({ $: encryptNodeRedBlob(CREDS, SECRET) }, null, 4));
    await writeFile(path.join(dir, '.config.runtime.json'), JSON.stringify({ instanceId: 'nr-inst', _credentialSecret: SECRET }, null, 4));
  });
  after(async () => {
    await removeDir(dir);
  });

  it('loads unchanged with the generated key Node-RED left, then saves in the GCM shape', async () => {
    const flowsText = await readFile(path.join(dir, 'flows.json'), 'utf8');
    const credText = await readFile(path.join(dir, 'flows_cred.json'), 'utf8');
    const captured = captureLog();
    const storage = createFileStorage(settingsFor(dir), captured.log);
    await storage.init();
    const snap = await storage.getFlows();
    assert.deepEqual(snap, { flows: FLOWS, credentials: JSON.parse(credText), rev: revOf(FLOWS) });
    assert.equal(await readFile(path.join(dir, 'flows.json'), 'utf8'), flowsText);
    assert.equal(await readFile(path.join(dir, 'flows_cred.json'), 'utf8'), credText);

    const key = await resolveCredentialKey(settingsFor(dir), storage, captured.log);
    assert.deepEqual(key, { type: 'system', secret: SECRET, legacySecrets: [] });
    const store = new CredentialStore({ key, definitionOf, log: captured.log, storage });
    await store.load(snap.credentials);
    assert.deepEqual(store.get('req1'), CREDS.req1);
    assert.deepEqual(store.forEditor('http request', 'req1'), { user: 'nr-user', has_password: true });
    assert.equal(store.needsSave, true);

    const plan = store.plan(snap.flows);
    const doc = await store.serialise(plan.credentials);
    const { rev } = await storage.saveFlows({ flows: plan.flows, credentials: doc, expectedRev: snap.rev });
    store.commit(plan.credentials);
    await store.saved(doc);
    assert.equal(rev, snap.rev);
    await storage.close();

    const file = (await readJsonFile(path.join(dir, 'flows_cred.json'))) as Record<string, unknown>;
    assert.deepEqual(Object.keys(file), ['$runnel', 'rev', 'prevRev', 'data']);
    assert.equal((file.data as Record<string, unknown>).alg, 'aes-256-gcm');
    const raw = await readFile(path.join(dir, 'flows_cred.json'), 'utf8');
    for (const clear of ['nr-user', 'nr-password-123']) assert.ok(!raw.includes(clear), clear);
    assert.deepEqual(await readJsonFile(path.join(dir, '.flows_cred.json.backup')), JSON.parse(credText));
    assert.deepEqual(await readJsonFile(path.join(dir, '.config.runtime.json')), { instanceId: 'nr-inst', _credentialSecret: SECRET });

    const reopened = createFileStorage(settingsFor(dir), captureLog().log);
    await reopened.init();
    const again = new CredentialStore({ key, definitionOf, log: captured.log, storage: reopened });
    await again.load((await reopened.getFlows()).credentials);
    assert.deepEqual(again.get('req1'), CREDS.req1);
    assert.equal(again.needsSave, false);
    await reopened.close();
  });
});
