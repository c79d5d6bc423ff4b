import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveCredentialKey } from '../../src/credentials/key.js';
import { CredentialStore } from '../../src/credentials/store.js';
import { encryptNodeRedBlob } from '../../src/credentials/nodered-cipher.js';
import type { RunnelError } from '../../src/base/errors.js';
import { createFileStorage } from '../../src/storage/file/file-storage.js';
import { settingsFor } from '../storage/support.js';
import { tempDir, removeDir } from '../helpers/dirs.js';
import { captureLog } from '../helpers/log.js';

describe('credential key selection', { timeout: 30_000 }, () => {
  let root: string;
  let n = 0;
  before(async () => {
    root = await tempDir();
  });
  after(async () => {
    await removeDir(root);
  });

  async function storageWith(config?: Record<string, unknown>) {
    const storage = createFileStorage(settingsFor(path.join(root, `k${n++}`)), captureLog().log);
    await storage.init();
    if (config) await storage.saveRuntimeConfig(config);
    return storage;
  }

  it('a configured credentialSecret is the user key', async () => {
    const storage = await storageWith({ instanceId: 'i' });
    const captured = captureLog();
    assert.deepEqual(await resolveCredentialKey({ credentialSecret: 'mine' }, storage, captured.log), { type: 'user', secret: 'mine', legacySecrets: [] });
    assert.deepEqual(captured.messages(40), []);
    await storage.close();
  });

  it('false disables encryption with a warning', async () => {
    const storage = await storageWith();
    const captured = captureLog();
    assert.deepEqual(await resolveCredentialKey({ credentialSecret: false }, storage, captured.log), { type: 'disabled', secret: undefined, legacySecrets: [] });
    assert.deepEqual(captured.messages(40), ['credentialSecret is false: credentials are stored unencrypted']);
    await storage.close();
  });

  it('unset generates a 32-byte key once, saves it next to the other runtime keys, warns at start', async () => {
    const storage = await storageWith({ instanceId: 'inst-1' });
    const first = captureLog();
    const key = await resolveCredentialKey({ credentialSecret: undefined }, storage, first.log);
    assert.equal(key.type, 'system');
    assert.match(key.secret!, /^[0-9a-f]{64}$/);
    assert.deepEqual(await storage.getRuntimeConfig(), { instanceId: 'inst-1', _credentialSecret: key.secret });
    assert.equal(first.messages(40).length, 1);
    assert.match(first.messages(40)[0]!, /^Generated a credential key/);
    const second = captureLog();
    assert.deepEqual(await resolveCredentialKey({ credentialSecret: undefined }, storage, second.log), key);
    assert.equal(second.messages(40).length, 1);
    assert.match(second.messages(40)[0]!, /^Credentials are encrypted with a generated key/);
    await storage.close();
  });

  it('generates no key beside credentials that are already encrypted: it refuses, naming the secret', async () => {
    const storage = await storageWith({ instanceId: 'inst-3' });
    await storage.saveFlows({ flows: [{ id: 'n1', type: 'tab' }], credentials: { $: encryptNodeRedBlob({ n1: { a: 'b' } }, 'theirs') } });
    await assert.rejects(resolveCredentialKey({ credentialSecret: undefined }, storage, captureLog().log, 'the credentials in X'), (e: RunnelError) => {
      assert.equal(e.code, 'credentials_undecryptable');
      assert.match(e.message, /^the credentials in X are encrypted, but credentialSecret is not set .*set credentialSecret in the settings file/);
      return true;
    });
    assert.deepEqual(await storage.getRuntimeConfig(), { instanceId: 'inst-3' });
    await storage.close();
  });

  it('migrates from the generated key to a user key and retires it after the next save', async () => {
    const storage = await storageWith({ instanceId: 'inst-2' });
    const log = captureLog().log;
    const system = await resolveCredentialKey({ credentialSecret: undefined }, storage, log);
    const definitionOf = () => undefined;
    const old = new CredentialStore({ key: system, definitionOf, log, storage });
    await old.load(null);
    old.add('n1', { token: 't0k' });
    await storage.saveFlows({ flows: [{ id: 'n1', type: 'tab' }], credentials: await old.serialise() });

    const user = await resolveCredentialKey({ credentialSecret: 'user-key' }, storage, log);
    assert.deepEqual(user, { type: 'user', secret: 'user-key', legacySecrets: [system.secret] });
    const store = new CredentialStore({ key: user, definitionOf, log, storage });
    await store.load((await storage.getFlows()).credentials);
    assert.deepEqual(store.get('n1'), { token: 't0k' });
    assert.equal(store.needsSave, true);
    // A save that keeps the old document must not retire the key it still needs.
    await storage.saveFlows({ flows: [{ id: 'n1', type: 'tab' }], credentials: null });
    await store.saved(null);
    assert.equal((await storage.getRuntimeConfig())._credentialSecret, system.secret);

    const doc = await store.serialise();
    await storage.saveFlows({ flows: [{ id: 'n1', type: 'tab' }], credentials: doc });
    await store.saved(doc);
    assert.deepEqual(await storage.getRuntimeConfig(), { instanceId: 'inst-2' });

    const fresh = new CredentialStore({ key: { type: 'user', secret: 'user-key', legacySecrets: [] }, definitionOf, log, storage });
    await fresh.load((await storage.getFlows()).credentials);
    assert.deepEqual(fresh.get('n1'), { token: 't0k' });
    await storage.close();
  });

  it('credentialSecret false still reads a document under the generated key, then stores it plain', async () => {
    const storage = await storageWith({ _credentialSecret: 'sys' });
    const log = captureLog().log;
    const key = await resolveCredentialKey({ credentialSecret: false }, storage, log);
    assert.deepEqual(key, { type: 'disabled', secret: undefined, legacySecrets: ['sys'] });
    const encrypted = await new CredentialStore({ key: { type: 'system', secret: 'sys', legacySecrets: [] }, definitionOf: () => undefined, log, storage }).serialise({ a: { b: 'c' } });
    const store = new CredentialStore({ key, definitionOf: () => undefined, log, storage });
    await store.load(encrypted);
    const doc = await store.serialise();
    assert.deepEqual(doc, { plain: { a: { b: 'c' } } });
    await store.saved(doc);
    assert.deepEqual(await storage.getRuntimeConfig(), {});
    await storage.close();
  });
});
