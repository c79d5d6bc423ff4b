import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { hashSync } from '../../src/auth/bcrypt.js';
import { adminHash } from '../helpers/users.js';
import { performance } from 'node:perf_hooks';
import { ADMIN_PASSWORD, login, startServer, type TestServer } from '../helpers/server.js';
import { arrivals } from './support.js';

/**
 * Before: a storm of logins filled the connection cap with logins waiting for bcrypt, and the
 * admin's own requests on new connections were reset until it passed. Logins in progress now
 * take at most a quarter of the cap; the others get 503 at once and their connections close.
 */
let server: TestServer;
before(async () => {
  server = await startServer({
    logging: { level: 'fatal' },
    // A realistic cost for the second user: an unknown name is checked at the highest cost, so each storm login takes tens of ms.
    adminAuth: { type: 'credentials', users: [{ username: 'admin', password: adminHash, permissions: '*' }, { username: 'ops', password: hashSync('ops-password-1', 10), permissions: '*' }] },
    loginThrottle: { maxFailures: 1_000_000 },
    httpServerLimits: { maxConnections: 80 },
  });
});
after(() => server.dispose());

/** One request on a connection of its own: a storm's connections must not be reused. */
function fresh(path: string, options: { from?: string; token?: string; body?: string } = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const headers: http.OutgoingHttpHeaders = options.token ? { authorization: `Bearer ${options.token}` } : {};
    if (options.body !== undefined) Object.assign(headers, { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(options.body) });
    const req = http.request(server.at(path), { method: options.body === undefined ? 'GET' : 'POST', agent: false, localAddress: options.from ?? '127.0.0.1', headers, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end(options.body);
  });
}

test("the admin's authenticated requests keep working during a login storm", { timeout: 120_000 }, async () => {
  const token = await login(server);
  // The storm's addresses have each failed once before: the owner's address has not.
  for (let a = 1; a <= 40; a++) {
    const body = new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', username: 'admin', password: 'wrong' }).toString();
    assert.equal(await fresh('auth/token', { from: `127.0.1.${a}`, body }), 400);
  }
  const arrived = arrivals(server.instance.app.server, 'request', 240, '/auth/token');
  const storm: Array<Promise<number | string>> = [];
  for (let a = 1; a <= 40; a++) {
    for (let i = 0; i < 6; i++) {
      const body = new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', username: `someone-${a}-${i}`, password: 'wrong' }).toString();
      storm.push(fresh('auth/token', { from: `127.0.1.${a}`, body }));
    }
  }
  // Every storm login has reached the server, a quarter of the cap of them waiting for bcrypt.
  await arrived;
  const admin: Array<number | string> = [];
  for (let i = 0; i < 10; i++) admin.push(await fresh('flows', { token }));
  // The owner, on an address never used before, logs in while the storm's logins hold their places.
  const t0 = performance.now();
  const owner = await fresh('auth/token', { from: '127.0.2.1', body: new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', username: 'admin', password: ADMIN_PASSWORD }).toString() });
  const ownerMs = performance.now() - t0;
  const answers = await Promise.all(storm);
  assert.deepEqual(admin, Array(10).fill(200), `storm answers: ${JSON.stringify(count(answers))}`);
  assert.equal(owner, 200, `storm answers: ${JSON.stringify(count(answers))}`);
  assert.ok(ownerMs < 1000, `the owner's login took ${ownerMs.toFixed(0)} ms`);
  assert.ok(answers.includes(503), `storm answers: ${JSON.stringify(count(answers))}`);
});

function count(values: Array<number | string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
