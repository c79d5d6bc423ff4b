import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { runStrategy } from '../../src/auth/strategy/passport.js';
import { CookieSessions } from '../../src/auth/strategy/session.js';
import { wrapVerify } from '../../src/auth/strategy/verify.js';
import { parseCookieOptions } from '../../src/settings/admin-strategy.js';

test('a strategy that never acts (a provider that does not answer) ends in an error, not a hang', async () => {
  const silent = { authenticate() {} };
  const outcome = await runStrategy(silent, {}, {}, 50);
  assert.equal(outcome.kind, 'error');
});

test("the strategy's actions are bound per run as passport binds them; the first one decides", async () => {
  const strategy = {
    authenticate(this: { fail(s: number): void; success(u: unknown): void }) {
      this.fail(403);
      this.success({ username: 'late' });
    },
  };
  assert.deepEqual(await runStrategy(strategy, {}, {}, 1000), { kind: 'fail', challenge: undefined, status: 403 });
  assert.equal(Object.hasOwn(strategy, 'fail'), false, 'the shared strategy object is left alone');
  const throwing = { authenticate() { throw new TypeError('bad'); } };
  assert.equal((await runStrategy(throwing, {}, {}, 1000)).kind, 'error');
});

test("the verify wrapper keeps the arity the user wrote and passes the user's profile on", async () => {
  const five = (_iss: unknown, profile: unknown, _ctx: unknown, _idToken: unknown, done: (e: unknown, p: unknown) => void) => done(null, profile);
  const wrapped = wrapVerify(five as (...a: unknown[]) => unknown, async (profile) => ({ seen: profile }));
  assert.equal(wrapped.length, 5);
  const result = await new Promise((resolve) => wrapped('iss', { username: 'alice' }, {}, 'id', (_e: unknown, user: unknown) => resolve(user)));
  assert.deepEqual(result, { seen: { username: 'alice' } });
});

test('the login session cookie is refused when altered, forged or expired, and cleared when emptied', () => {
  let now = 1_000_000;
  const key = randomBytes(32);
  const sessions = new CookieSessions(parseCookieOptions({ secure: true, sameSite: 'lax' }), key, () => now);
  const set = sessions.write({ 'openidconnect:idp': { state: { handle: 'h' } } }, false)!;
  assert.match(set, /^connect\.sid=[\w-]+\.[\w-]+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  const value = set.split(';')[0]!.slice('connect.sid='.length);
  assert.deepEqual(sessions.read(`connect.sid=${value}`).data, { 'openidconnect:idp': { state: { handle: 'h' } } });
  const [payload, signature] = value.split('.');
  const altered = Buffer.from(JSON.stringify({ d: { 'openidconnect:idp': { state: { handle: 'evil' } } }, e: now + 1000 })).toString('base64url');
  assert.deepEqual(sessions.read(`connect.sid=${altered}.${signature}`).data, {});
  assert.deepEqual(sessions.read(`connect.sid=${payload}.${'A'.repeat(signature!.length)}`).data, {});
  assert.deepEqual(new CookieSessions(parseCookieOptions(undefined), randomBytes(32), () => now).read(`connect.sid=${value}`).data, {}, 'another key');
  assert.deepEqual(new CookieSessions(parseCookieOptions(undefined), Buffer.from(key), () => now).read(`connect.sid=${value}`).data, { 'openidconnect:idp': { state: { handle: 'h' } } }, 'the same key on another instance');
  now += 11 * 60_000;
  assert.deepEqual(sessions.read(`connect.sid=${value}`), { data: {}, had: true });
  assert.match(sessions.write({}, true)!, /^connect\.sid=; Path=\/; Max-Age=0; HttpOnly/);
  assert.equal(sessions.write({}, false), undefined);
});
