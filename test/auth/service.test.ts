import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createFileStorage } from '../../src/storage/file/file-storage.js';
import { createAuthService, OAuthError } from '../../src/auth/service.js';
import { hashToken } from '../../src/auth/tokens.js';
import { resolveSettings, type CredentialsAuthConfig } from '../../src/settings/settings.js';
import type { AuthService } from '../../src/auth/types.js';
import { authSettings, MemorySessions } from './support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { captureLog } from '../helpers/log.js';
import { fakeClock } from '../helpers/clock.js';
import type { Clock } from '../../src/base/clock.js';
import { ADMIN_PASSWORD, READER_PASSWORD } from '../helpers/users.js';

const IP = '127.0.0.1';

async function make(settings = authSettings(), storage = new MemorySessions(), clock?: Clock) {
  const { log, raw: lines } = captureLog('info');
  const auth = await createAuthService({ settings, storage, log, clock });
  return { auth, storage, lines, log };
}

const login = (auth: AuthService, username: string, password: string, scope?: string, ip = IP) =>
  auth.login({ username, password, scope, client: 'runtime-admin', ip });

async function oauthFailure(p: Promise<unknown>): Promise<OAuthError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OAuthError) return e;
    throw e;
  }
  throw new Error('expected an OAuthError');
}

test('auth off: disabled service', async () => {
  const { auth } = await make(resolveSettings({ userDir: '/nonexistent-runnel-test' }));
  assert.equal(auth.enabled, false);
  assert.equal(await auth.authenticate('anything'), null);
  const e = await oauthFailure(login(auth, 'admin', ADMIN_PASSWORD));
  assert.deepEqual([e.status, e.error], [404, 'not_found']);
  await auth.close();
});

test('login returns a token that authenticates with its scope', async () => {
  const { auth } = await make();
  const grant = await login(auth, 'admin', ADMIN_PASSWORD, '*');
  assert.equal(grant.expiresIn, 604800);
  assert.deepEqual(await auth.authenticate(grant.accessToken), { username: 'admin', scope: ['*'], tokenHash: hashToken(grant.accessToken) });
  const reader = await login(auth, 'reader', READER_PASSWORD);
  assert.deepEqual((await auth.authenticate(reader.accessToken))?.scope, ['read'], 'missing scope = own permissions');
  const narrow = await login(auth, 'writer', ADMIN_PASSWORD, 'nodes.read');
  assert.deepEqual((await auth.authenticate(narrow.accessToken))?.scope, ['nodes.read']);
  assert.equal(await auth.authenticate('x'.repeat(43)), null);
  assert.equal(await auth.authenticate(''), null);
  await auth.close();
});

test('wrong password and unknown user fail identically', async () => {
  const { auth } = await make();
  const wrong = await oauthFailure(login(auth, 'admin', 'nope'));
  const unknown = await oauthFailure(login(auth, 'mallory', ADMIN_PASSWORD));
  for (const e of [wrong, unknown]) {
    assert.deepEqual([e.status, e.error, e.description], [400, 'invalid_grant', 'Invalid username or password']);
  }
  await auth.close();
});

test('a scope beyond the user permissions is invalid_scope', async () => {
  const { auth, lines } = await make();
  const e = await oauthFailure(login(auth, 'reader', READER_PASSWORD, '*'));
  assert.deepEqual([e.status, e.error], [400, 'invalid_scope']);
  assert.ok(lines.some((l) => l.includes('"reason":"scope"')));
  await auth.close();
});

test('throttling: 429 with retry seconds for the pair, not for another address', async () => {
  const settings = authSettings({ loginThrottle: { maxFailures: 3, windowMs: 60_000 } });
  const { auth } = await make(settings);
  for (let i = 0; i < 3; i++) await oauthFailure(login(auth, 'admin', 'wrong'));
  const e = await oauthFailure(login(auth, 'admin', ADMIN_PASSWORD));
  assert.equal(e.status, 429);
  assert.equal(e.error, 'temporarily_unavailable');
  assert.ok(e.retryAfter !== undefined && e.retryAfter > 0 && e.retryAfter <= 60, `retryAfter ${e.retryAfter}`);
  assert.equal(e.description, `Too many failed login attempts; retry in ${e.retryAfter} seconds`);
  assert.ok(await login(auth, 'admin', ADMIN_PASSWORD, '*', '127.0.0.2'));
  await auth.close();
});

test('parallel guesses cannot outrun the throttle', async () => {
  const settings = authSettings({ loginThrottle: { maxFailures: 2, windowMs: 60_000 } });
  const { auth } = await make(settings);
  const results = await Promise.all(Array.from({ length: 20 }, () => oauthFailure(login(auth, 'admin', 'wrong'))));
  const guessed = results.filter((e) => e.error === 'invalid_grant').length;
  // 429 beyond the budget; 503 beyond the logins one address may have in progress.
  const refused = results.filter((e) => e.status === 429 || e.status === 503).length;
  assert.equal(guessed + refused, 20);
  // Each attempt counts before it waits for anything, so exactly the budget is checked.
  assert.equal(guessed, 2, `${guessed} passwords were checked`);
  await auth.close();
});

test('sessions survive a restart; expired ones do not authenticate', async () => {
  const storage = new MemorySessions();
  const first = await make(authSettings(), storage);
  const grant = await login(first.auth, 'admin', ADMIN_PASSWORD, '*');
  await first.auth.close();
  const second = await make(authSettings(), storage);
  assert.equal((await second.auth.authenticate(grant.accessToken))?.username, 'admin');
  await second.auth.close();
  assert.ok(!JSON.stringify(storage.sessions).includes(grant.accessToken));

  const clock = fakeClock();
  const short = await make(authSettings({}, { sessionExpiryTime: 1 }), new MemorySessions(), clock);
  const g = await login(short.auth, 'admin', ADMIN_PASSWORD, '*');
  assert.equal(g.expiresIn, 1);
  clock.advance(999);
  assert.ok(await short.auth.authenticate(g.accessToken));
  clock.advance(1);
  assert.equal(await short.auth.authenticate(g.accessToken), null);
  await short.auth.close();
});

test('with file storage: the token survives a restart and .sessions.json holds only its hash', async () => {
  const userDir = await tempDir();
  try {
    const settings = authSettings({ userDir });
    const open = async () => {
      const { log } = captureLog('info');
      const storage = createFileStorage(settings, log);
      await storage.init();
      return { storage, auth: await createAuthService({ settings, storage, log }) };
    };
    const first = await open();
    const grant = await login(first.auth, 'admin', ADMIN_PASSWORD, '*');
    const file = await readFile(path.join(userDir, '.sessions.json'), 'utf8');
    assert.ok(file.includes(hashToken(grant.accessToken)));
    assert.ok(!file.includes(grant.accessToken));
    await first.auth.close();
    await first.storage.close();
    const second = await open();
    assert.equal((await second.auth.authenticate(grant.accessToken))?.username, 'admin');
    await second.auth.close();
    await second.storage.close();
  } finally {
    await removeDir(userDir);
  }
});

test('a user removed from the settings loses their sessions', async () => {
  const storage = new MemorySessions();
  const first = await make(authSettings(), storage);
  const grant = await login(first.auth, 'reader', READER_PASSWORD);
  await first.auth.close();
  const withoutReader = authSettings();
  const config = withoutReader.adminAuth as CredentialsAuthConfig;
  config.users = config.users.filter((u) => u.username !== 'reader');
  const second = await make(withoutReader, storage);
  assert.equal(await second.auth.authenticate(grant.accessToken), null);
  await second.auth.close();
});

test('revoke: own token or with *, otherwise ignored', async () => {
  const { auth } = await make();
  const admin = await login(auth, 'admin', ADMIN_PASSWORD, '*');
  const admin2 = await login(auth, 'admin', ADMIN_PASSWORD, '*');
  const reader = await login(auth, 'reader', READER_PASSWORD);
  const reader2 = await login(auth, 'reader', READER_PASSWORD);
  const readerP = (await auth.authenticate(reader.accessToken))!;
  const adminP = (await auth.authenticate(admin.accessToken))!;

  await auth.revoke(readerP, admin.accessToken);
  assert.ok(await auth.authenticate(admin.accessToken), 'reader cannot revoke the admin token');
  await auth.revoke(readerP, reader2.accessToken);
  assert.equal(await auth.authenticate(reader2.accessToken), null, 'own other session');
  await auth.revoke(readerP, 'never-issued');
  await auth.revoke(adminP, reader.accessToken);
  assert.equal(await auth.authenticate(reader.accessToken), null, '* may revoke anyone');
  await auth.revoke(adminP, admin.accessToken);
  assert.equal(await auth.authenticate(admin.accessToken), null, 'own current token');
  assert.ok(await auth.authenticate(admin2.accessToken));
  await auth.close();
});

test('audit lines for success, failure and revocation, never with secrets', async () => {
  const { auth, lines, log } = await make();
  const grant = await login(auth, 'admin', ADMIN_PASSWORD, '*');
  await oauthFailure(login(auth, 'admin', 'secret-wrong-password'));
  await auth.revoke((await auth.authenticate(grant.accessToken))!, grant.accessToken);
  await auth.close();
  log.flush();
  await new Promise((r) => setTimeout(r, 50));
  const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event);
  assert.deepEqual(
    events.map((e) => [e.event, e.username, e.level]),
    [
      ['auth.login', 'admin', 45],
      ['auth.login.fail', 'admin', 45],
      ['auth.revoke', 'admin', 45],
    ],
  );
  assert.equal(events[0].ip, IP);
  assert.equal(events[0].client, 'runtime-admin');
  const all = lines.join('\n');
  for (const secret of [grant.accessToken, ADMIN_PASSWORD, 'secret-wrong-password']) assert.ok(!all.includes(secret));
});

test('a revocation on one instance ends a session another instance made moments ago, before any notice of it arrived', async () => {
  // Two instances over one shared store whose change notices never arrive: only a read finds the session.
  const storage = new MemorySessions();
  const shared = { instanceId: 'b', onChange: () => () => undefined, findSession: async (h: string) => storage.sessions.find((s) => s.tokenHash === h) };
  const b = await make(authSettings(), Object.assign(storage, { shared }) as unknown as MemorySessions);
  const caller = (await b.auth.authenticate((await login(b.auth, 'reader', READER_PASSWORD)).accessToken))!;
  const a = await make(authSettings(), storage);
  const { accessToken } = await login(a.auth, 'admin', ADMIN_PASSWORD);
  assert.equal(await b.auth.revokeUser(caller, 'admin'), 1);
  assert.ok(!storage.sessions.some((s) => s.tokenHash === hashToken(accessToken)), 'gone from the shared store');
  await Promise.all([a.auth.close(), b.auth.close()]);
});
