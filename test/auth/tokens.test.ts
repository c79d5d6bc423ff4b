import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashToken, TokenStore } from '../../src/auth/tokens.js';
import { MemorySessions } from './support.js';
import { captureLog } from '../helpers/log.js';

function setup(lifetime = 60, maxSessions = 10_000, onEvict?: (s: { username: string }) => void) {
  const storage = new MemorySessions();
  const c = { t: 5_000_000 };
  const { log } = captureLog('info');
  const open = () => TokenStore.open(storage, log, { lifetime, maxSessions, onEvict, now: () => c.t });
  return { storage, c, open };
}

test('tokens are 256-bit base64url and stored only as their SHA-256', async () => {
  const { storage, open } = setup();
  const store = await open();
  const { token, record } = await store.create('admin', 'runtime-admin', ['*']);
  assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(record.tokenHash, hashToken(token));
  assert.match(record.tokenHash, /^[0-9a-f]{64}$/);
  assert.equal(storage.sessions.length, 1, 'persisted before create resolves');
  assert.deepEqual(storage.sessions[0], { tokenHash: hashToken(token), username: 'admin', client: 'runtime-admin', scope: ['*'], expires: 5_060_000 });
  assert.ok(!JSON.stringify(storage.sessions).includes(token));
  assert.equal(store.get(token)?.username, 'admin');
  assert.equal(store.get(token + 'x'), undefined);
});

test('sessions survive a restart over the same storage', async () => {
  const { open } = setup();
  const first = await open();
  const { token } = await first.create('reader', 'runtime-editor', ['read']);
  await first.flush();
  const second = await open();
  assert.deepEqual(second.get(token)?.scope, ['read']);
});

test('expiry is absolute; expired sessions are pruned on load and by prune()', async () => {
  const { storage, c, open } = setup(10);
  const store = await open();
  const { token: old } = await store.create('admin', 'runtime-admin', ['*']);
  c.t += 5000;
  const { token: young } = await store.create('admin', 'runtime-admin', ['*']);
  c.t += 5000;
  assert.equal(store.get(old), undefined, 'expired at exactly its lifetime');
  assert.ok(store.get(young));
  assert.equal(await store.prune(), 1);
  assert.equal(storage.sessions.length, 1);
  c.t += 5000;
  const reopened = await open();
  assert.equal(reopened.size, 0);
  assert.deepEqual(storage.sessions, [], 'the pruned list was saved at load');
});

test('malformed stored records are dropped at load', async () => {
  const { storage, open } = setup();
  storage.sessions = [
    { tokenHash: 'not-hex', username: 'a', client: 'c', scope: [], expires: 9e15 },
    { tokenHash: 'a'.repeat(64), username: 'a', client: 'c', scope: '*' as unknown as string[], expires: 9e15 },
    { tokenHash: 'b'.repeat(64), username: 'a', client: 'c', scope: ['*'], expires: 9e15 },
  ];
  const store = await open();
  assert.equal(store.size, 1);
  assert.equal(storage.sessions[0].tokenHash, 'b'.repeat(64));
});

test('sessions are capped in all, the oldest expiring and reported', async () => {
  const evicted: string[] = [];
  const { c, open } = setup(3600, 4, (s) => evicted.push(s.username));
  const store = await open();
  const tokens: string[] = [];
  for (let i = 0; i < 5; i++) {
    tokens.push((await store.create('admin', 'runtime-admin', ['*'])).token);
    c.t += 1000;
  }
  const other = (await store.create('reader', 'runtime-admin', ['read'])).token;
  assert.deepEqual(tokens.map((t) => Boolean(store.get(t))), [false, false, true, true, true]);
  assert.ok(store.get(other));
  assert.equal(store.size, 4);
  assert.deepEqual(evicted, ['admin', 'admin']);
});

test('concurrent creates are all persisted with few writes', async () => {
  const { storage, open } = setup();
  const store = await open();
  const made = await Promise.all(Array.from({ length: 50 }, () => store.create('admin', 'runtime-admin', ['*'])));
  assert.equal(storage.sessions.length, 50);
  assert.ok(storage.saves <= 3, `expected coalesced saves, got ${storage.saves}`);
  for (const m of made) assert.ok(storage.sessions.some((s) => s.tokenHash === hashToken(m.token)));
});

test('a failed save withdraws the new token', async () => {
  const { storage, open } = setup();
  const store = await open();
  storage.saveSessions = async () => {
    throw new Error('disk full');
  };
  await assert.rejects(store.create('admin', 'runtime-admin', ['*']), /disk full/);
  assert.equal(store.size, 0);
});

test('remove deletes and persists', async () => {
  const { storage, open } = setup();
  const store = await open();
  const { token, record } = await store.create('admin', 'runtime-admin', ['*']);
  assert.equal(await store.remove(record.tokenHash), true);
  assert.equal(await store.remove(record.tokenHash), false);
  assert.equal(store.get(token), undefined);
  assert.deepEqual(storage.sessions, []);
});

test('a fleeting record (an exchange code on one instance) costs no write to make or to take, and is saved with the next change', async () => {
  const { storage, open } = setup();
  const store = await open();
  const before = storage.saves;
  const code = await store.create('alice', 'exchange-code', ['*'], undefined, {}, { lifetime: 20, fleeting: true });
  assert.equal(storage.saves, before, 'made without a write');
  assert.equal((await store.take(code.token, 'exchange-code'))?.username, 'alice');
  assert.equal(storage.saves, before, 'taken without a write: it was never written');
  assert.equal(await store.take(code.token, 'exchange-code'), undefined, 'and taken once');

  const pending = await store.create('alice', 'exchange-code', ['*'], undefined, {}, { lifetime: 20, fleeting: true });
  await store.create('bob', 'runtime-admin', ['*']);
  assert.ok(storage.sessions.some((s) => s.tokenHash === pending.record.tokenHash), 'the next save takes it along');
  assert.ok(await store.take(pending.token, 'exchange-code'));
  await store.flush();
  assert.ok(!storage.sessions.some((s) => s.tokenHash === pending.record.tokenHash), 'once saved, taking it is saved too');
});
