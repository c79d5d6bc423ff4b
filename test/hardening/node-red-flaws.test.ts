import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, login, request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { CredentialCipher, encryptNodeRedBlob } from '../../src/credentials/cipher.js';
import { hashToken } from '../../src/auth/tokens.js';
import { send, tokenRequest } from './support.js';
import { ADMIN_PASSWORD, adminAuth, READER_PASSWORD } from '../helpers/users.js';
import { deploy } from '../helpers/deploy.js';
import { fakeClock } from '../helpers/clock.js';

/**
 * Every flaw of Node-RED listed in node-red-behaviour.md §8, shown absent in Runnel. Each test is
 * named after its flaw. Installer timeouts and npm error classification are shown in
 * test/registry/installer.test.ts; upload limits and clean-up in module-attacks.test.ts.
 */
const SECRET = 'flaws-secret';
const v2 = { 'runtime-api-version': 'v2' };
const tab = (id: string) => ({ id, type: 'tab', label: id });

let server: TestServer;
let capture: Capture;
let admin: string;
let reader: string;
before(async () => {
  // The throttle's per-user delays (500 ms, doubling) after the wrong passwords below pass on this clock, not in real time.
  server = await startServer({ adminAuth: adminAuth(), credentialSecret: SECRET, loginThrottle: { maxFailures: 3, windowMs: 60_000 } }, undefined, { clock: fakeClock() });
  capture = installCapture(server);
  admin = await login(server);
  reader = await login(server, 'reader', READER_PASSWORD, 'read');
});
after(() => server.dispose());

/** A v2 POST /flows whose refusal the test examines (deploys expected to succeed use the shared `deploy`). */
const postFlows = (flows: unknown[], extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  request(server.at('flows'), { method: 'POST', headers: { ...v2, ...headers }, json: { flows, ...extra }, token: admin });

describe('one error shape, meaningful 401s', () => {
  test('malformed JSON is a {code, message} JSON error, not an HTML stack trace', async () => {
    const res = await request(server.at('flows'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"flows": [', token: admin });
    assert.equal(res.status, 400);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(res.body, { code: 'invalid_json', message: 'Request body is not valid JSON at line 1, column 12 (character 11): Unexpected end of JSON input' });
  });

  test('a permission denial is not an empty 401: it names the missing permission', async () => {
    const res = await request(server.at('flows'), { method: 'POST', json: [], token: reader });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { code: 'insufficient_scope', message: 'The access token lacks the permission "flows.write"' });
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="runnel", error="insufficient_scope", scope="flows.write"');
  });

  test('a version mismatch says what happened, and codes are strings', async () => {
    const res = await postFlows([], { rev: 'stale' });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, { code: 'version_mismatch', message: 'The flows have changed: rev stale is not the active rev' });
    const notFound = await request(server.at('nodes/no-such-module'), { token: admin });
    assert.deepEqual([notFound.status, typeof notFound.body.code], [404, 'string']);
  });
});

describe('token endpoint statuses', () => {
  test('an unsupported grant is 400 unsupported_grant_type, not 501', async () => {
    const body = new URLSearchParams({ client_id: 'runtime-admin', grant_type: 'client_credentials' }).toString();
    const res = await send(server.at('auth/token'), { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.deepEqual([res.status, res.body], [400, { error: 'unsupported_grant_type', error_description: 'Unsupported grant type: client_credentials' }]);
  });

  test('a lockout is 429 with Retry-After, not 500', async () => {
    for (let i = 0; i < 3; i++) await tokenRequest(server.at, 'admin', 'wrong', '127.0.0.41');
    const res = await tokenRequest(server.at, 'admin', 'wrong', '127.0.0.41');
    assert.equal(res.status, 429);
    assert.equal(res.body.error, 'temporarily_unavailable');
    assert.ok(Number(res.headers['retry-after']) > 0);
  });

  test('a scope denial is told apart from a bad password', async () => {
    const scope = await tokenRequest(server.at, 'reader', READER_PASSWORD, '127.0.0.42', '*');
    const password = await tokenRequest(server.at, 'reader', 'wrong', '127.0.0.42', 'read');
    assert.deepEqual([scope.status, scope.body.error], [400, 'invalid_scope']);
    assert.deepEqual([password.status, password.body.error], [400, 'invalid_grant']);
  });
});

test('a missing scope grants the user permissions; a scope must be a subset', async () => {
  const body = new URLSearchParams({ client_id: 'runtime-admin', grant_type: 'password', username: 'reader', password: READER_PASSWORD }).toString();
  const res = await send(server.at('auth/token'), { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' }, from: '127.0.0.43' });
  assert.equal(res.status, 200);
  const settings = await request(server.at('settings'), { token: res.body.access_token });
  assert.deepEqual([settings.status, settings.body.user], [200, { username: 'reader', permissions: 'read' }]);
  const narrowed = await tokenRequest(server.at, 'admin', ADMIN_PASSWORD, '127.0.0.43', 'flows.read settings.read');
  const t = narrowed.body.access_token as string;
  assert.equal((await request(server.at('flows'), { token: t })).status, 200);
  assert.equal((await request(server.at('nodes'), { token: t })).status, 401);
  assert.equal((await tokenRequest(server.at, 'reader', READER_PASSWORD, '127.0.0.43', 'read flows.write')).body.error, 'invalid_scope');
});

test('bad or expired tokens are 401, never a silent downgrade to a default user', async () => {
  const clock = fakeClock();
  const open = await startServer({ adminAuth: adminAuth({ default: { permissions: 'read' }, sessionExpiryTime: 1 }) }, undefined, { clock });
  try {
    const t = await login(open);
    clock.advance(1000);
    for (const token of [t, 'garbage', `${t.slice(0, 20)}`]) {
      const res = await request(open.at('flows'), { token });
      assert.deepEqual([res.status, res.body.code], [401, 'invalid_token']);
    }
    // No token at all is what adminAuth.default describes (Node-RED's anonymous user): read, never more.
    assert.equal((await request(open.at('flows'))).status, 200);
    assert.equal((await request(open.at('flows'), { method: 'POST', json: [] })).status, 401);
  } finally {
    await open.dispose();
  }
});

test('revoke needs ownership, or *', async () => {
  const victim = await login(server);
  const attempt = await request(server.at('auth/revoke'), { method: 'POST', json: { token: victim }, token: reader });
  assert.deepEqual([attempt.status, attempt.text], [200, '']);
  assert.equal((await request(server.at('settings'), { token: victim })).status, 200, 'the reader revoked the admin token');
  const readerOwn = await login(server, 'reader', READER_PASSWORD, 'read');
  await request(server.at('auth/revoke'), { method: 'POST', json: { token: readerOwn }, token: admin });
  assert.equal((await request(server.at('settings'), { token: readerOwn })).status, 401, '* may revoke any token');
  // RFC 7009 §2.2: an unknown token is answered 200 and changes nothing.
  const unknown = await request(server.at('auth/revoke'), { method: 'POST', json: { token: 'never-issued' }, token: reader });
  assert.equal(unknown.status, 200);
  assert.equal((await request(server.at('settings'), { token: reader })).status, 200);
});

test('tokens are stored hashed and capped (adminAuth.maxSessions)', async () => {
  // A small cap proves what a large one does, with as many logins (each a stored write) as it needs.
  const CAP = 5;
  const own = await startServer({ adminAuth: adminAuth({ maxSessions: CAP }) });
  try {
    const first = await login(own);
    const tokens = [first];
    for (let i = 0; i < CAP; i++) tokens.push(await login(own));
    const stored = await readFile(path.join(own.userDir, '.sessions.json'), 'utf8');
    assert.deepEqual(tokens.filter((t) => stored.includes(t)), [], 'a token is stored in clear');
    assert.ok(stored.includes(hashToken(tokens[CAP])));
    assert.equal((await request(own.at('settings'), { token: first })).status, 401, 'the session past the cap drops the oldest');
    assert.equal((await request(own.at('settings'), { token: tokens[CAP] })).status, 200);
  } finally {
    await own.dispose();
  }
});

describe('the rate limiter', () => {
  test('successes do not count toward the limit', async () => {
    for (let i = 0; i < 6; i++) assert.equal((await tokenRequest(server.at, 'admin', ADMIN_PASSWORD, '127.0.0.44')).status, 200);
  });

  test('nobody can lock a known user out from another address', async () => {
    for (let i = 0; i < 6; i++) await tokenRequest(server.at, 'reader', 'wrong', '127.0.0.45');
    assert.equal((await tokenRequest(server.at, 'reader', READER_PASSWORD, '127.0.0.45', 'read')).status, 429);
    assert.equal((await tokenRequest(server.at, 'reader', READER_PASSWORD, '127.0.0.46', 'read')).status, 200);
  });
});

describe('deploy completion', () => {
  test('the deploy answers after the nodes started: the new route answers at once', async () => {
    for (let i = 0; i < 5; i++) {
      const flows = [tab('h'), { id: 'in', type: 'http in', z: 'h', url: `/started-${i}`, method: 'get', x: 1, y: 1, wires: [['out']] },
        { id: 'out', type: 'http response', z: 'h', x: 2, y: 1, wires: [] }];
      await deploy(server, flows, { api: 'v2', token: admin });
      assert.equal((await send(new URL(`started-${i}`, server.url).href)).status, 200);
    }
  });

  test('unknown deployment types are refused', async () => {
    const res = await postFlows([], {}, { 'runtime-deployment-type': 'partial' });
    assert.deepEqual(res.body, { code: 'invalid_deployment_type', message: 'Invalid deployment type "partial": use full, nodes, flows or reload' });
  });

  test('a node that fails to stop is reported, not swallowed', async () => {
    const flows = [tab('s'), { id: 'bad-stop', type: 'function', z: 's', func: 'return msg;', finalize: 'throw new Error("cannot stop")', outputs: 1, x: 1, y: 1, wires: [[]] }];
    await deploy(server, flows, { api: 'v2', token: admin });
    const mark = server.logs.length;
    await deploy(server, [tab('s')], { api: 'v2', token: admin });
    await eventually(() => server.logs.slice(mark).some((l) => l.includes('bad-stop') && l.includes('cannot stop') && /"level":(40|50)/.test(l)));
  });
});

test('a missing type does not block the other flows, and /flows/state says so', async () => {
  const flows = [
    tab('ok'), { id: 'in', type: 'http in', z: 'ok', url: '/unblocked', method: 'get', x: 1, y: 1, wires: [['out']] },
    { id: 'out', type: 'http response', z: 'ok', x: 2, y: 1, wires: [] },
    tab('broken'), { id: 'm', type: 'no-such-type', z: 'broken', x: 1, y: 1, wires: [] },
  ];
  await deploy(server, flows, { api: 'v2', token: admin });
  const state = await request(server.at('flows/state'), { token: admin });
  assert.deepEqual(state.body.missingTypes, ['no-such-type']);
  assert.equal((await send(new URL('unblocked', server.url).href)).status, 200, 'the complete flow runs');
});

test('a bad $ credentials blob fails the deploy and keeps the credentials in memory', async () => {
  const node = { id: 'cap', type: 'test-capture', z: 'c', x: 1, y: 1, wires: [] };
  await deploy(server, [tab('c'), { ...node, credentials: { user: 'kept', password: 'kept-pw' } }], { api: 'v2', token: admin });
  const bad = await postFlows([tab('c'), node], { credentials: { $: encryptNodeRedBlob({ cap: { user: 'x' } }, 'another-secret') } });
  assert.deepEqual([bad.status, bad.body.code], [400, 'credentials_load_failed']);
  const view = await request(server.at('credentials/test-capture/cap'), { token: admin });
  assert.deepEqual(view.body, { user: 'kept', has_password: true });
  await deploy(server, [tab('c'), node], { api: 'v2', token: admin });
  assert.deepEqual(capture.credentials.get('cap'), { user: 'kept', password: 'kept-pw' });
});

test('credentials are encrypted with authentication and a stretched key', async () => {
  const doc = JSON.parse(await readFile(path.join(server.userDir, 'flows_cred.json'), 'utf8'));
  assert.equal(doc.data.alg, 'aes-256-gcm');
  assert.equal(doc.data.kdf, 'scrypt');
  const cipher = new CredentialCipher(SECRET, []);
  await cipher.decrypt(doc.data);
  const bytes = Buffer.from(doc.data.data, 'base64');
  bytes[0] ^= 1;
  await assert.rejects(cipher.decrypt({ ...doc.data, data: bytes.toString('base64') }));
});

test('multipart uploads are size-limited: 413, not an unbounded write', async () => {
  const boundary = '----flaws';
  const big = Buffer.alloc(21 * 1024 * 1024, 1);
  const body = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="tarball"; filename="m.tgz"\r\n\r\n`), big, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  const res = await send(server.at('nodes'), { method: 'POST', body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${admin}` } });
  assert.deepEqual([res.status, res.body.code], [413, 'payload_too_large']);
});

test('/nodes answers JSON for any Accept a JSON client sends', async () => {
  for (const accept of [undefined, 'application/json', 'application/json, text/plain, */*', '*/*', 'application/json;q=0.9']) {
    const res = await send(server.at('nodes'), { headers: { authorization: `Bearer ${admin}`, ...(accept ? { accept } : {}) } });
    assert.equal(res.status, 200, `Accept: ${accept}`);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.ok(Array.isArray(res.body));
  }
});

test('enabling an unknown node set is 404 not_found; core sets do not claim to be user-installed', async () => {
  const res = await request(server.at('nodes/node-red/no-such-set'), { method: 'PUT', json: { enabled: false }, token: admin });
  assert.equal(res.status, 404);
  assert.equal(res.body.code, 'not_found');
  const sets = (await request(server.at('nodes'), { token: admin })).body as Record<string, unknown>[];
  assert.ok(sets.length > 0);
  for (const set of sets.filter((s) => s.module === 'node-red')) assert.notEqual(set.user, true, String(set.id));
  const core = await request(server.at('nodes/node-red'), { token: admin });
  assert.equal(core.body.user, undefined);
});
