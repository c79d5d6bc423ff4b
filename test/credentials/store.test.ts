import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encryptNodeRedBlob } from '../../src/credentials/cipher.js';
import type { CredentialDefinition } from '../../src/credentials/inline.js';
import type { CredentialKey } from '../../src/credentials/key.js';
import { CredentialStore } from '../../src/credentials/store.js';
import { RunnelError } from '../../src/base/errors.js';
import type { CredentialMap, FlowNodeConfig, RuntimeConfig } from '../../src/storage/contract.js';
import { captureLog } from '../helpers/log.js';

const DEFS: Record<string, CredentialDefinition | null> = {
  'http request': { user: { type: 'text' }, password: { type: 'password' } },
  inject: null,
};
const definitionOf = (type: string) => DEFS[type];
const USER_KEY: CredentialKey = { type: 'user', secret: 'the-secret', legacySecrets: [] };

function memoryStorage(initial: RuntimeConfig = {}) {
  let config = structuredClone(initial);
  return {
    getRuntimeConfig: async () => structuredClone(config),
    saveRuntimeConfig: async (c: RuntimeConfig) => {
      config = structuredClone(c);
    },
    updateRuntimeConfig: async (change: (c: RuntimeConfig) => RuntimeConfig) => {
      config = structuredClone(change(structuredClone(config)));
      return structuredClone(config);
    },
    current: () => config,
  };
}

async function storeWith(map: CredentialMap, key: CredentialKey = USER_KEY) {
  const captured = captureLog();
  const store = new CredentialStore({ key, definitionOf, log: captured.log, storage: memoryStorage() });
  await store.load({ plain: map });
  return { store, captured };
}

const HTTP = (credentials?: Record<string, unknown>): FlowNodeConfig =>
  ({ id: 'h1', type: 'http request', z: 't1', url: 'http://x', ...(credentials ? { credentials } : {}) });
const TAB: FlowNodeConfig = { id: 't1', type: 'tab' };

describe('credential store: inline rules', { timeout: 30_000 }, () => {
  it('a defined type takes only its defined keys; undefined and __PWRD__ (password) keep, blank deletes', async () => {
    const { store } = await storeWith({ h1: { user: 'old-user', password: 'old-pass' } });
    const keep = store.plan([TAB, HTTP({ password: '__PWRD__', extra: 'dropped' })]);
    assert.deepEqual({ ...keep.credentials }, { h1: { user: 'old-user', password: 'old-pass' } });
    assert.equal(keep.changed, false);
    const change = store.plan([TAB, HTTP({ user: 'new-user', password: 'new-pass' })]);
    assert.deepEqual({ ...change.credentials }, { h1: { user: 'new-user', password: 'new-pass' } });
    assert.equal(change.changed, true);
    const blank = store.plan([TAB, HTTP({ user: '   ', password: '' })]);
    assert.deepEqual({ ...blank.credentials }, {});
    const textPlaceholder = store.plan([TAB, HTTP({ user: '__PWRD__' })]);
    assert.deepEqual({ ...textPlaceholder.credentials }, { h1: { user: '__PWRD__', password: 'old-pass' } });
  });

  it('a type registered without credentials: ignored with a warning, stored ones kept', async () => {
    const { store, captured } = await storeWith({ i1: { a: '1' } });
    const plan = store.plan([{ id: 'i1', type: 'inject', credentials: { a: '2', b: '3' } }]);
    assert.deepEqual({ ...plan.credentials }, { i1: { a: '1' } });
    assert.deepEqual(plan.flows, [{ id: 'i1', type: 'inject' }]);
    assert.deepEqual(captured.messages(40), ['Credentials ignored: the node type has no credentials definition']);
  });

  it('unknown types, tabs and groups take every key, merged over the stored ones, with __PWRD__ and blanks', async () => {
    const { store } = await storeWith({ u1: { a: 'A', b: 'B', c: 'C' }, t1: { x: 'X' } });
    const plan = store.plan([
      { id: 't1', type: 'tab', credentials: { y: 'Y' } },
      { id: 'g1', type: 'group', z: 't1', credentials: { k: 'v', blank: ' ' } },
      { id: 'u1', type: 'not-installed', z: 't1', credentials: { a: '__PWRD__', b: '', d: 'D' } },
    ]);
    assert.deepEqual({ ...plan.credentials }, { t1: { x: 'X', y: 'Y' }, g1: { k: 'v' }, u1: { a: 'A', c: 'C', d: 'D' } });
  });

  it('subflow instances replace their set: absent keys are removed, __PWRD__ keeps', async () => {
    const { store } = await storeWith({ s1: { KEEP: 'k', GONE: 'g', CHANGE: 'c' } });
    const plan = store.plan([TAB, { id: 's1', type: 'subflow:abc', z: 't1', credentials: { KEEP: '__PWRD__', CHANGE: 'c2', NEW: 'n' } }]);
    assert.deepEqual({ ...plan.credentials }, { s1: { KEEP: 'k', CHANGE: 'c2', NEW: 'n' } });
  });

  it('global-config env credentials: a complete map with placeholders', async () => {
    const { store } = await storeWith({ gc: { map: { A: 'a', B: 'b' } } });
    const plan = store.plan([{ id: 'gc', type: 'global-config', credentials: { map: { A: '__PWRD__', C: 'c' } } }]);
    assert.deepEqual({ ...plan.credentials }, { gc: { map: { A: 'a', C: 'c' } } });
  });

  it('drops credentials of nodes no longer deployed, strips every credentials property, never mutates inputs', async () => {
    const { store } = await storeWith({ h1: { user: 'u' }, gone: { user: 'g' } });
    const flows = [TAB, HTTP({ user: 'u2' }), { id: 'n2', type: 'debug', z: 't1', credentials: {} }];
    const frozen = structuredClone(flows);
    const plan = store.plan(flows);
    assert.deepEqual(flows, frozen);
    assert.deepEqual(plan.flows, [TAB, HTTP(), { id: 'n2', type: 'debug', z: 't1' }]);
    assert.deepEqual({ ...plan.credentials }, { h1: { user: 'u2' } });
    assert.deepEqual([...plan.changedNodes].sort(), ['h1', 'n2']);
    assert.deepEqual(store.get('gone'), { user: 'g' });
    assert.deepEqual(store.get('h1'), { user: 'u' });
  });
});

describe('credential store: top-level forms', { timeout: 30_000 }, () => {
  it('a map replaces each listed node wholesale (no placeholder handling) and keeps the others', async () => {
    const { store } = await storeWith({ h1: { user: 'u', password: 'p' }, t1: { x: '1' } });
    const plan = store.plan([TAB, HTTP()], { h1: { user: 'map-user', password: '__PWRD__' } });
    assert.deepEqual({ ...plan.credentials }, { h1: { user: 'map-user', password: '__PWRD__' }, t1: { x: '1' } });
    assert.deepEqual([...plan.changedNodes], ['h1']);
    assert.throws(() => store.plan([TAB], { t1: 'nope' }), (e: unknown) =>
      e instanceof RunnelError && e.status === 400 && e.code === 'invalid_credentials');
  });

  it('a $ blob is the complete set, decrypted with the current key', async () => {
    const { store } = await storeWith({ h1: { user: 'u' }, t1: { x: '1' } });
    const blob = encryptNodeRedBlob({ h1: { user: 'enc-user', password: 'enc-pass' }, other: { a: 'b' } }, 'the-secret');
    const plan = store.plan([TAB, HTTP()], { $: blob });
    assert.deepEqual({ ...plan.credentials }, { h1: { user: 'enc-user', password: 'enc-pass' } });
    assert.equal(plan.changed, true);
  });

  it('a $ blob that does not decrypt is a 400 and changes nothing', async () => {
    const { store } = await storeWith({ h1: { user: 'u', password: 'p' } });
    for (const blob of [encryptNodeRedBlob({ h1: { user: 'x' } }, 'wrong-key'), 'garbage', 42]) {
      assert.throws(() => store.plan([TAB, HTTP({ user: 'inline' })], { $: blob }), (e: unknown) => {
        assert.ok(e instanceof RunnelError);
        assert.deepEqual([e.status, e.code, e.message], [400, 'credentials_load_failed', 'Failed to decrypt credentials']);
        return true;
      });
    }
    assert.deepEqual(store.forEditor('http request', 'h1'), { user: 'u', has_password: true });
    assert.deepEqual(store.get('h1'), { user: 'u', password: 'p' });
  });
});

describe('credential store: reading back and lifecycle', { timeout: 30_000 }, () => {
  it('forEditor: text in clear, has_ for passwords, has_ for every key of tabs/groups/subflows, {} otherwise', async () => {
    const { store } = await storeWith({ h1: { user: 'carol', password: 'x' }, h2: { password: '' }, t1: { a: 'x', b: '' }, s1: { E: 'e' }, u1: { a: 'b' } });
    assert.deepEqual(store.forEditor('http request', 'h1'), { user: 'carol', has_password: true });
    assert.deepEqual(store.forEditor('http request', 'h2'), { user: '', has_password: false });
    assert.deepEqual(store.forEditor('tab', 't1'), { has_a: true, has_b: false });
    assert.deepEqual(store.forEditor('subflow:x', 's1'), { has_E: true });
    assert.deepEqual(store.forEditor('not-installed', 'u1'), {});
    assert.deepEqual(store.forEditor('http request', 'nobody'), {});
  });

  it('commit, get (a copy), add, delete and needsSave', async () => {
    const { store } = await storeWith({});
    assert.equal(store.needsSave, true, 'a plain document under a user key must be re-encrypted');
    await store.load(null);
    assert.equal(store.needsSave, false);
    const plan = store.plan([TAB, HTTP({ user: 'u', password: 'p' })]);
    assert.equal(store.get('h1'), undefined);
    store.commit(plan.credentials);
    assert.equal(store.needsSave, true);
    const copy = store.get('h1')!;
    copy.user = 'mutated';
    assert.deepEqual(store.get('h1'), { user: 'u', password: 'p' });
    const doc = await store.serialise();
    await store.saved(doc);
    assert.equal(store.needsSave, false);
    store.add('t1', { token: 'abc' });
    assert.equal(store.needsSave, true);
    store.delete('t1');
    assert.equal(store.get('t1'), undefined);
  });

  it('load throws credentials_undecryptable on a document it cannot open and keeps what it had', async () => {
    const { store } = await storeWith({ h1: { user: 'u' } });
    const foreign = await new CredentialStore({ key: { type: 'user', secret: 'other', legacySecrets: [] }, definitionOf, log: captureLog().log, storage: memoryStorage() }).serialise({ h1: { user: 'z' } });
    await assert.rejects(store.load(foreign), (e: unknown) =>
      e instanceof RunnelError && e.code === 'credentials_undecryptable' && /do not decrypt/.test(e.message));
    await assert.rejects(store.load({ $: 'ff'.repeat(16) + 'AAAA' }), { code: 'credentials_undecryptable' });
    assert.deepEqual(store.get('h1'), { user: 'u' });
  });

  it('marks a Node-RED document for rewriting and serialises to GCM without plaintext', async () => {
    const captured = captureLog();
    const store = new CredentialStore({ key: USER_KEY, definitionOf, log: captured.log, storage: memoryStorage() });
    await store.load({ $: encryptNodeRedBlob({ h1: { user: 'nr', password: 'nr-pass' } }, 'the-secret') });
    assert.equal(store.needsSave, true);
    const doc = await store.serialise();
    assert.equal(doc.alg, 'aes-256-gcm');
    assert.ok(!JSON.stringify(doc).includes('nr-pass'));
    await store.saved(doc);
    assert.equal(store.needsSave, false);
    await store.saved(null);
    assert.equal(store.needsSave, false);
  });
});
