import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { checkBearer, needsPermission } from '../../src/auth/guard.js';
import { createAuthService } from '../../src/auth/service.js';
import type { AuthService } from '../../src/auth/types.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { authSettings, MemorySessions } from './support.js';
import { captureLog } from '../helpers/log.js';
import { ADMIN_PASSWORD, READER_PASSWORD } from '../helpers/users.js';

let auth: AuthService;
let app: FastifyInstance;
let url: string;
let adminToken: string;
let readerToken: string;

before(async () => {
  auth = await createAuthService({ settings: authSettings(), storage: new MemorySessions(), log: captureLog('info').log });
  adminToken = (await auth.login({ username: 'admin', password: ADMIN_PASSWORD, scope: '*', client: 'runtime-admin', ip: '::1' })).accessToken;
  readerToken = (await auth.login({ username: 'reader', password: READER_PASSWORD, scope: '', client: 'runtime-admin', ip: '::1' })).accessToken;
  app = Fastify();
  app.get('/write', { onRequest: needsPermission(auth, 'flows.write') }, async (request) => ({ user: request.user?.username ?? null }));
  app.get('/read', { preHandler: needsPermission(auth, 'flows.read') }, async (request) => ({ user: request.user?.username ?? null }));
  url = await app.listen({ port: 0, host: '127.0.0.1' });
});

after(async () => {
  await app.close();
  await auth.close();
});

async function get(path: string, authorization?: string) {
  const res = await fetch(url + path, { headers: authorization ? { authorization } : {}, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, www: res.headers.get('www-authenticate'), body: (await res.json()) as unknown };
}

test('a valid token with the permission passes and sets request.user', async () => {
  assert.deepEqual(await get('/write', `Bearer ${adminToken}`), { status: 200, www: null, body: { user: 'admin' } });
  assert.deepEqual(await get('/read', `bearer ${readerToken}`), { status: 200, www: null, body: { user: 'reader' } });
  assert.deepEqual(await get('/read', `BEARER   ${readerToken}`), { status: 200, www: null, body: { user: 'reader' } });
});

test('no bearer credentials: unauthorized', async () => {
  const expected = {
    status: 401,
    www: 'Bearer realm="runnel"',
    body: { code: 'unauthorized', message: 'Authentication required: send Authorization: Bearer <token>' },
  };
  assert.deepEqual(await get('/write'), expected);
  assert.deepEqual(await get('/write', 'Basic YWRtaW46eA=='), expected);
});

test('unknown or malformed token: invalid_token', async () => {
  const expected = {
    status: 401,
    www: 'Bearer realm="runnel", error="invalid_token"',
    body: { code: 'invalid_token', message: 'The access token is invalid, expired or revoked' },
  };
  assert.deepEqual(await get('/write', 'Bearer nope'), expected);
  assert.deepEqual(await get('/write', 'Bearer'), expected);
  assert.deepEqual(await get('/write', `Bearer ${adminToken} extra`), expected);
  assert.deepEqual(await get('/write', `Bearer ${'a'.repeat(1000)}`), expected);
});

test('valid token lacking the permission: insufficient_scope', async () => {
  assert.deepEqual(await get('/write', `Bearer ${readerToken}`), {
    status: 401,
    www: 'Bearer realm="runnel", error="insufficient_scope", scope="flows.write"',
    body: { code: 'insufficient_scope', message: 'The access token lacks the permission "flows.write"' },
  });
});

test('checkBearer with auth off passes without a principal', async () => {
  const off = await createAuthService({
    settings: resolveSettings({ userDir: '/nonexistent-runnel-test' }),
    storage: new MemorySessions(),
    log: captureLog('info').log,
  });
  assert.deepEqual(await checkBearer(off, undefined, 'flows.write'), { ok: true, principal: null });
  const r = await checkBearer(auth, `Bearer ${readerToken}`, '');
  assert.equal(r.ok && r.principal?.username, 'reader');
});
