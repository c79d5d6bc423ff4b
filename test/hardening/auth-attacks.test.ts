import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { hashSync } from '../../src/auth/bcrypt.js';
import { login, request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { fakeClock } from '../helpers/clock.js';
import { filesHolding, median, send, tokenRequest } from './support.js';
import { ADMIN_PASSWORD, adminAuth, READER_PASSWORD } from '../helpers/users.js';
import { deploy } from '../helpers/deploy.js';

/** Authentication attacks (issue 6 §4), each over real HTTP from distinct loopback addresses. */

const INVALID_TOKEN = { code: 'invalid_token', message: 'The access token is invalid, expired or revoked' };
const INVALID_GRANT = { error: 'invalid_grant', error_description: 'Invalid username or password' };

describe('password guessing and spraying', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), loginThrottle: { maxFailures: 5, windowMs: 60_000 } });
  });
  after(() => server.dispose());

  test('guessing one password from one address is throttled with Retry-After; the real user elsewhere still logs in', async () => {
    for (let i = 0; i < 5; i++) assert.deepEqual((await tokenRequest(server.at, 'admin', `guess-${i}`, '127.0.0.10')).body, INVALID_GRANT);
    for (const password of ['guess-5', ADMIN_PASSWORD]) {
      const refused = await tokenRequest(server.at, 'admin', password, '127.0.0.10');
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.body.error, 'temporarily_unavailable');
      const retry = Number(refused.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry > 0 && retry <= 60, `Retry-After: ${refused.headers['retry-after']}`);
    }
    const real = await tokenRequest(server.at, 'admin', ADMIN_PASSWORD, '127.0.0.11');
    assert.equal(real.status, 200, real.text);
  });

  test('spraying many usernames from one address is throttled too', async () => {
    // Each username fails fewer times than the per-user limit; the address limit (4 × 5) still trips.
    const statuses: number[] = [];
    for (let i = 0; i < 24; i++) statuses.push((await tokenRequest(server.at, `user-${i}`, 'password', '127.0.0.12')).status);
    assert.deepEqual(statuses, [...Array(20).fill(400), ...Array(4).fill(429)]);
    assert.equal((await tokenRequest(server.at, 'reader', READER_PASSWORD, '127.0.0.12', 'read')).status, 429);
    assert.equal((await tokenRequest(server.at, 'reader', READER_PASSWORD, '127.0.0.13', 'read')).status, 200);
  });
});

describe('unknown user and wrong password are indistinguishable', () => {
  let server: TestServer;
  // A realistic cost, so bcrypt dominates the noise of a shared machine.
  const hash = hashSync('right-password', 10);
  before(async () => {
    server = await startServer({
      adminAuth: { type: 'credentials', users: [{ username: 'alice', password: hash, permissions: '*' }] },
      loginThrottle: { maxFailures: 100_000 },
    });
  });
  after(() => server.dispose());

  const timeOne = async (username: string) => {
    const t0 = performance.now();
    const r = await tokenRequest(server.at, username, 'wrong-password');
    const ms = performance.now() - t0;
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, INVALID_GRANT);
    return { ms, text: r.text, headers: { ...r.headers, date: undefined, 'content-length': r.headers['content-length'] } };
  };

  /** Interleaved samples, compared by median: one pass can be skewed by a burst of other work. */
  const medians = async () => {
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 12; i++) {
      known.push((await timeOne('alice')).ms);
      unknown.push((await timeOne(`nobody-${i}`)).ms);
    }
    return { known: median(known), unknown: median(unknown) };
  };

  test('same answer and, within noise, the same time', { timeout: 60_000 }, async () => {
    const a = await timeOne('alice');
    const b = await timeOne('nobody');
    assert.equal(a.text, b.text);
    let m = await medians();
    const close = () => Math.abs(m.known - m.unknown) <= 0.5 * Math.max(m.known, m.unknown);
    if (!close()) m = await medians();
    assert.ok(close(), `median ${m.known.toFixed(1)} ms for a wrong password, ${m.unknown.toFixed(1)} ms for an unknown user`);
  });
});

describe('tokens that must not work', () => {
  let server: TestServer;
  const clock = fakeClock();
  before(async () => {
    server = await startServer({ adminAuth: adminAuth({ sessionExpiryTime: 1 }) }, undefined, { clock });
  });
  after(() => server.dispose());

  const settingsWith = (token: string) => request(server.at('settings'), { token });

  test('expired, revoked, truncated and tampered tokens all get 401 invalid_token', async () => {
    const live = await login(server);
    assert.equal((await settingsWith(live)).status, 200);
    const tampered = live.slice(0, 10) + (live[10] === 'A' ? 'B' : 'A') + live.slice(11);
    const revoked = await login(server);
    const revoke = await request(server.at('auth/revoke'), { method: 'POST', json: { token: revoked }, token: revoked });
    assert.equal(revoke.status, 200);
    for (const bad of [live.slice(0, -1), live.slice(0, 20), tampered, `${live}x`, revoked]) {
      const res = await settingsWith(bad);
      assert.equal(res.status, 401, bad);
      assert.deepEqual(res.body, INVALID_TOKEN);
    }
    clock.advance(1000);
    const expired = await settingsWith(live);
    assert.equal(expired.status, 401);
    assert.deepEqual(expired.body, INVALID_TOKEN);
  });
});

describe('secrets at rest and in logs', () => {
  test('tokens, passwords and credentials never appear in clear in the user dir or the logs', async () => {
    const server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'scan-secret', logging: { level: 'trace' } });
    const capture = installCapture(server);
    try {
      const admin = await login(server);
      const reader = await login(server, 'reader', READER_PASSWORD, 'read');
      const credential = 'node-credential-value-7f3a';
      const flows = [
        { id: 't', type: 'tab' },
        { id: 'n', type: 'test-capture', z: 't', x: 1, y: 1, wires: [], credentials: { user: credential, password: credential } },
      ];
      await deploy(server, flows, { api: 'v2', token: admin });
      assert.deepEqual(capture.credentials.get('n'), { user: credential, password: credential }, 'the credentials were stored');
      await tokenRequest(server.at, 'admin', 'a-wrong-guess-91c2');
      await send(server.at('settings'), { headers: { authorization: `Bearer ${admin}` } });
      await request(server.at('auth/revoke'), { method: 'POST', json: { token: reader }, token: reader });
      await server.stop();
      const secrets = [admin, reader, ADMIN_PASSWORD, READER_PASSWORD, credential, 'a-wrong-guess-91c2', 'scan-secret'];
      assert.deepEqual(await filesHolding(server.userDir, secrets), []);
      const logs = server.logs.join('\n');
      assert.ok(server.logs.length > 3, 'the scan needs logs to look at');
      assert.deepEqual(secrets.filter((s) => logs.includes(s)), []);
    } finally {
      await server.dispose();
    }
  });
});
