import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { hashSync } from '../../src/auth/bcrypt.js';
import { ADMIN_PASSWORD, adminAuth, login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';

/**
 * Sessions follow their user: a `*` token kept deploying after its user was demoted to `read` and
 * stayed valid after the password changed; a user's older tokens were silently revoked after 100
 * newer logins. Sessions are now checked against the user's current settings, admins can list and
 * revoke them, and only a large total cap (adminAuth.maxSessions) expires the oldest.
 */
const deployBody = [{ id: 't', type: 'tab' }];
const hashes = new Map<string, string>();
const users = (permissions: string, password = ADMIN_PASSWORD) => {
  if (!hashes.has(password)) hashes.set(password, hashSync(password, 4));
  return { type: 'credentials', users: [{ username: 'admin', password: hashes.get(password), permissions }] };
};

async function withRestarts(fn: (start: (auth: unknown) => Promise<TestServer>) => Promise<void>) {
  const dir = await tempDir();
  let current: TestServer | undefined;
  try {
    await fn(async (auth) => {
      await current?.stop();
      current = await startServer({ adminAuth: auth }, dir);
      return current;
    });
  } finally {
    await current?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

test('a token of a user demoted to read can no longer deploy', async () => {
  await withRestarts(async (start) => {
    let server = await start(users('*'));
    const token = await login(server);
    assert.equal((await request(server.at('flows'), { method: 'POST', json: deployBody, token })).status, 204);
    server = await start(users('read'));
    const deploy = await request(server.at('flows'), { method: 'POST', json: deployBody, token });
    assert.equal(deploy.body.code, 'insufficient_scope', deploy.text);
    assert.equal((await request(server.at('flows'), { token })).status, 200);
  });
});

test('a password change ends the sessions from before it, at start', async () => {
  await withRestarts(async (start) => {
    let server = await start(users('*'));
    const token = await login(server);
    server = await start(users('*', 'a-new-password-2'));
    const res = await request(server.at('flows'), { token });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'invalid_token');
    assert.ok(server.logs.some((l) => l.includes('auth.session.ended') && l.includes('password_changed')));
    assert.ok(await login(server, 'admin', 'a-new-password-2'));
  });
});

test('150 newer logins do not log out the first session', async () => {
  const server = await startServer({ adminAuth: adminAuth(), logging: { level: 'warn' } });
  try {
    const first = await login(server);
    for (let i = 0; i < 150; i++) await login(server);
    assert.equal((await request(server.at('flows'), { token: first })).status, 200);
  } finally {
    await server.dispose();
  }
});

test('beyond adminAuth.maxSessions the oldest session expires, audited', async () => {
  const server = await startServer({ adminAuth: adminAuth({ maxSessions: 3 }) });
  try {
    const tokens = [];
    for (let i = 0; i < 4; i++) tokens.push(await login(server));
    assert.equal((await request(server.at('flows'), { token: tokens[0] })).status, 401);
    assert.equal((await request(server.at('flows'), { token: tokens[3] })).status, 200);
    assert.ok(server.logs.some((l) => l.includes('auth.session.evicted')));
  } finally {
    await server.dispose();
  }
});

test('an admin lists sessions and revokes all of a user\'s; others may not', async () => {
  const server = await startServer({ adminAuth: adminAuth() });
  try {
    const admin = await login(server);
    const reader = await login(server, 'reader', 'reader-password-1', 'read');
    const listed = await request(server.at('auth/sessions'), { token: admin });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.sessions.map((s: { username: string }) => s.username).sort(), ['admin', 'reader']);
    assert.ok(!listed.text.includes(reader));
    assert.equal((await request(server.at('auth/sessions'), { token: reader })).body.code, 'insufficient_scope');
    assert.equal((await request(server.at('auth/sessions/admin'), { method: 'DELETE', token: reader })).body.code, 'insufficient_scope');
    const revoked = await request(server.at('auth/sessions/reader'), { method: 'DELETE', token: admin });
    assert.deepEqual(revoked.body, { revoked: 1 });
    assert.equal((await request(server.at('flows'), { token: reader })).status, 401);
    assert.equal((await request(server.at('flows'), { token: admin })).status, 200);
  } finally {
    await server.dispose();
  }
});
