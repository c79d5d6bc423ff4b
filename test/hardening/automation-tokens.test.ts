import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { hashSync } from '../../src/auth/bcrypt.js';
import { login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * Automation tokens (POST /auth/tokens) kept their full scope after their creator was demoted,
 * changed password or was removed: a `*` token still deployed, minted more `*` tokens and ended
 * the remaining admins' sessions. A short-lived token minted tokens that never expired, and any
 * tokens.write holder could revoke anyone's token.
 */
const deployBody = [{ id: 't', type: 'tab' }];
const hashes = new Map<string, string>();
const user = (username: string, permissions: string | string[], password = `${username}-password-1`) => {
  if (!hashes.has(password)) hashes.set(password, hashSync(password, 4));
  return { username, password: hashes.get(password), permissions };
};
const auth = (...users: unknown[]) => ({ type: 'credentials', users });

async function withRestarts(fn: (start: (adminAuth: unknown) => Promise<TestServer>) => Promise<void>) {
  const dir = await tempDir();
  let current: TestServer | undefined;
  try {
    await fn(async (adminAuth) => {
      await current?.stop();
      current = await startServer({ adminAuth }, dir);
      return current;
    });
  } finally {
    await current?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const mint = (server: TestServer, token: string, json: Record<string, unknown>) => request(server.at('auth/tokens'), { method: 'POST', token, json });

test("an automation token follows its creator's current permissions: demoted, it can no longer deploy, mint or end sessions", async () => {
  await withRestarts(async (start) => {
    let server = await start(auth(user('alice', '*'), user('bob', '*')));
    const alice = await login(server, 'alice', 'alice-password-1');
    const made = await mint(server, alice, { name: 'ci', scope: '*' });
    assert.equal(made.status, 200, made.text);
    const ci = made.body.token as string;
    assert.equal((await request(server.at('flows'), { method: 'POST', json: deployBody, token: ci })).status, 204);

    server = await start(auth(user('alice', 'read'), user('bob', '*')));
    const bob = await login(server, 'bob', 'bob-password-1');
    const deploy = await request(server.at('flows'), { method: 'POST', json: deployBody, token: ci });
    assert.deepEqual([deploy.status, deploy.body.code], [401, 'insufficient_scope']);
    const more = await mint(server, ci, { name: 'more', scope: '*' });
    assert.deepEqual([more.status, more.body.code], [401, 'insufficient_scope']);
    const endBob = await request(server.at('auth/sessions/bob'), { method: 'DELETE', token: ci });
    assert.deepEqual([endBob.status, endBob.body.code], [401, 'insufficient_scope']);
    assert.equal((await request(server.at('flows'), { token: bob })).status, 200, "bob's session lives");
    assert.equal((await request(server.at('flows'), { token: ci })).status, 200, 'it may still read, as alice may');
  });
});

test('a password change or removing the creator ends their automation tokens, audited', async () => {
  await withRestarts(async (start) => {
    let server = await start(auth(user('alice', '*'), user('bob', '*')));
    const alice = await login(server, 'alice', 'alice-password-1');
    const bob = await login(server, 'bob', 'bob-password-1');
    const aliceToken = (await mint(server, alice, { name: 'alice-ci', scope: '*' })).body.token as string;
    const bobToken = (await mint(server, bob, { name: 'bob-ci', scope: '*' })).body.token as string;

    server = await start(auth(user('alice', '*', 'a-new-password-2'), user('bob', '*')));
    const changed = await request(server.at('flows'), { token: aliceToken });
    assert.deepEqual([changed.status, changed.body.code], [401, 'invalid_token']);
    assert.equal((await request(server.at('flows'), { token: bobToken })).status, 200);
    assert.ok(server.logs.some((l) => l.includes('auth.token.ended') && l.includes('alice-ci') && l.includes('password_changed')));

    server = await start(auth(user('alice', '*', 'a-new-password-2')));
    const removed = await request(server.at('flows'), { token: bobToken });
    assert.deepEqual([removed.status, removed.body.code], [401, 'invalid_token']);
    assert.ok(server.logs.some((l) => l.includes('auth.token.ended') && l.includes('bob-ci') && l.includes('user_removed')));
  });
});

test('a token made with a token is listed with its user and chain, and follows that user too', async () => {
  await withRestarts(async (start) => {
    let server = await start(auth(user('alice', '*')));
    const alice = await login(server, 'alice', 'alice-password-1');
    const first = await mint(server, alice, { name: 'ci', scope: '*' });
    const second = await mint(server, first.body.token, { name: 'deploy', scope: 'flows.read flows.write tokens.write' });
    assert.equal(second.status, 200, second.text);
    const third = await mint(server, second.body.token, { name: 'job', scope: 'flows.write' });
    assert.equal(third.status, 200, third.text);
    const listed = await request(server.at('auth/tokens'), { token: alice });
    const byName = Object.fromEntries(listed.body.tokens.map((t: { name: string }) => [t.name, t]));
    assert.equal(byName.ci.createdBy, 'alice');
    assert.equal(byName.ci.via, undefined);
    assert.deepEqual([byName.job.createdBy, byName.job.via], ['alice', [{ id: first.body.id, name: 'ci' }, { id: second.body.id, name: 'deploy' }]]);

    server = await start(auth(user('alice', 'read')));
    const deploy = await request(server.at('flows'), { method: 'POST', json: deployBody, token: third.body.token });
    assert.deepEqual([deploy.status, deploy.body.code], [401, 'insufficient_scope']);
  });
});

test('a token never mints one that outlives or out-scopes it', async () => {
  const server = await startServer({ adminAuth: auth(user('alice', '*')) });
  try {
    const alice = await login(server, 'alice', 'alice-password-1');
    const short = await mint(server, alice, { name: 'short', scope: 'tokens.write flows.read', expiresIn: 60 });
    assert.equal(short.status, 200, short.text);
    const forever = await mint(server, short.body.token, { name: 'forever', scope: 'flows.read' });
    assert.equal(forever.status, 200, forever.text);
    assert.ok(forever.body.expires !== undefined && forever.body.expires <= short.body.expires, `expires ${forever.body.expires}, its maker ${short.body.expires}`);
    const longer = await mint(server, short.body.token, { name: 'longer', scope: 'flows.read', expiresIn: 3600 });
    assert.deepEqual([longer.status, longer.body.code], [403, 'forbidden']);
    const wider = await mint(server, short.body.token, { name: 'wider', scope: 'flows.write' });
    assert.deepEqual([wider.status, wider.body.code], [403, 'forbidden']);
    const fromLogin = await mint(server, alice, { name: 'login-made', scope: 'flows.read' });
    assert.equal(fromLogin.body.expires, undefined, 'a login session still makes tokens that live until revoked');
  } finally {
    await server.dispose();
  }
});

test("only the token's user or a holder of * revokes an automation token; its tokens go with it", async () => {
  const server = await startServer({ adminAuth: auth(user('alice', '*'), user('ops', ['tokens.write', 'tokens.read', 'flows.read'])) });
  try {
    const alice = await login(server, 'alice', 'alice-password-1');
    const ops = await login(server, 'ops', 'ops-password-1', '');
    const aliceCi = await mint(server, alice, { name: 'alice-ci', scope: '*' });
    const opsCi = await mint(server, ops, { name: 'ops-ci', scope: 'flows.read tokens.write' });
    const opsChild = await mint(server, opsCi.body.token, { name: 'ops-child', scope: 'flows.read' });
    assert.equal(opsChild.status, 200, opsChild.text);

    const denied = await request(server.at(`auth/tokens/${aliceCi.body.id}`), { method: 'DELETE', token: ops });
    assert.deepEqual([denied.status, denied.body.code], [403, 'forbidden']);
    assert.equal((await request(server.at('flows'), { token: aliceCi.body.token })).status, 200);

    const narrow = await login(server, 'alice', 'alice-password-1', 'tokens.write');
    assert.equal((await request(server.at(`auth/tokens/${aliceCi.body.id}`), { method: 'DELETE', token: narrow })).status, 204, 'its own user may');
    assert.equal((await request(server.at(`auth/tokens/${opsCi.body.id}`), { method: 'DELETE', token: alice })).status, 204, '* may');
    for (const gone of [aliceCi, opsCi, opsChild]) assert.equal((await request(server.at('flows'), { token: gone.body.token })).status, 401, gone.body.name);
  } finally {
    await server.dispose();
  }
});

test("revoking a user's sessions also ends the automation tokens acting for them, and theirs only", async () => {
  const server = await startServer({ adminAuth: auth(user('alice', '*'), user('bob', '*')) });
  try {
    const alice = await login(server, 'alice', 'alice-password-1');
    const bob = await login(server, 'bob', 'bob-password-1');
    const bobCi = await mint(server, bob, { name: 'bob-ci', scope: '*' });
    const bobChild = await mint(server, bobCi.body.token, { name: 'bob-child', scope: 'flows.read' });
    const aliceCi = await mint(server, alice, { name: 'alice-ci', scope: '*' });
    assert.equal(bobChild.status, 200, bobChild.text);

    const revoked = await request(server.at('auth/sessions/bob'), { method: 'DELETE', token: alice });
    assert.deepEqual([revoked.status, revoked.body], [200, { revoked: 3 }]);
    for (const gone of [bob, bobCi.body.token, bobChild.body.token]) {
      const res = await request(server.at('flows'), { token: gone });
      assert.deepEqual([res.status, res.body.code], [401, 'invalid_token']);
    }
    const listed = await request(server.at('auth/tokens'), { token: alice });
    assert.deepEqual(listed.body.tokens.map((t: { name: string }) => t.name), ['alice-ci']);
    assert.equal((await request(server.at('flows'), { token: aliceCi.body.token })).status, 200);
    assert.ok(server.logs.some((l) => l.includes('auth.revoke.user') && l.includes(bobCi.body.id) && l.includes(bobChild.body.id)));
  } finally {
    await server.dispose();
  }
});

test('a user left without permissions in adminAuth.users, on restart, leaves their automation tokens nothing', async () => {
  await withRestarts(async (start) => {
    let server = await start(auth(user('alice', '*'), user('bob', '*')));
    const bob = await login(server, 'bob', 'bob-password-1');
    const ci = (await mint(server, bob, { name: 'bob-ci', scope: '*' })).body.token as string;

    server = await start(auth(user('alice', '*'), user('bob', [])));
    for (const [path, method] of [['flows', 'GET'], ['flows', 'POST'], ['auth/tokens', 'GET']] as const) {
      const res = await request(server.at(path), { method, token: ci, ...(method === 'POST' ? { json: deployBody } : {}) });
      assert.deepEqual([res.status, res.body.code], [401, 'insufficient_scope'], `${method} ${path}`);
    }
  });
});
