import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { copyFixture } from '../registry/support.js';
import { AUDIT_LEVEL } from '../../src/base/log.js';
import { send, tokenRequest } from './support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { ADMIN_PASSWORD, adminAuth, READER_PASSWORD } from '../helpers/users.js';
import { deploy } from '../helpers/deploy.js';

/**
 * The audit log: one structured line at level `audit` (45) for every login (success or failure,
 * with the client address), token revocation, deploy (user, type, old and new rev), module
 * install, removal, enabling and disabling, and context deletion. Lines are compared whole, timestamps and request ids aside.
 */
let server: TestServer;
let work: string;
before(async () => {
  work = await tempDir();
  server = await startServer({ adminAuth: adminAuth(), externalModules: { palette: { allowInstall: true, allowLocalPaths: true } } });
});
after(async () => {
  await server.dispose();
  await removeDir(work);
});

/** Audit lines written since `from`, without their timestamp and request id. */
function auditSince(from: number): Record<string, unknown>[] {
  return server.logs
    .slice(from)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.level === AUDIT_LEVEL)
    .map(({ time, reqId, ...rest }) => {
      assert.equal(typeof time, 'string');
      if (reqId !== undefined) assert.match(String(reqId), /^[0-9a-f-]{36}$/);
      return rest;
    });
}

const hashOf = (flows: unknown) => createHash('sha256').update(JSON.stringify(flows)).digest('hex');

test('login success and failure carry the user, client and address', async () => {
  const mark = server.logs.length;
  assert.equal((await tokenRequest(server.at, 'admin', ADMIN_PASSWORD, '127.0.0.31')).status, 200);
  assert.equal((await tokenRequest(server.at, 'admin', 'nope', '127.0.0.32')).status, 400);
  assert.equal((await tokenRequest(server.at, 'mallory', 'nope', '127.0.0.33')).status, 400);
  assert.deepEqual(auditSince(mark), [
    { level: 45, event: 'auth.login', scope: ['*'], username: 'admin', ip: '127.0.0.31', client: 'runtime-admin', msg: 'login succeeded' },
    { level: 45, event: 'auth.login.fail', reason: 'credentials', username: 'admin', ip: '127.0.0.32', client: 'runtime-admin', msg: 'login failed: bad username or password' },
    { level: 45, event: 'auth.login.fail', reason: 'credentials', username: 'mallory', ip: '127.0.0.33', client: 'runtime-admin', msg: 'login failed: bad username or password' },
  ]);
});

test('revocation: own token, and an ignored attempt on another user’s token', async () => {
  const admin = (await tokenRequest(server.at, 'admin', ADMIN_PASSWORD)).body.access_token as string;
  const reader = (await tokenRequest(server.at, 'reader', READER_PASSWORD, '127.0.0.1', 'read')).body.access_token as string;
  const mark = server.logs.length;
  await request(server.at('auth/revoke'), { method: 'POST', json: { token: admin }, token: reader });
  await request(server.at('auth/revoke'), { method: 'POST', json: { token: reader }, token: reader });
  assert.deepEqual(auditSince(mark), [
    { level: 45, event: 'auth.revoke', username: 'reader', owner: 'admin', outcome: 'not_owner', msg: 'revoke ignored: token belongs to another user' },
    { level: 45, event: 'auth.revoke', username: 'reader', owner: 'reader', outcome: 'revoked', self: true, msg: 'token revoked' },
  ]);
});

test('deploys of each type name the user, the client address, the type and the old and new rev', async () => {
  const token = (await tokenRequest(server.at, 'admin', ADMIN_PASSWORD)).body.access_token as string;
  const v2 = { 'runtime-api-version': 'v2' };
  const old = (await request(server.at('flows'), { headers: v2, token })).body.rev as string;
  const mark = server.logs.length;
  const flowsA = [{ id: 't', type: 'tab' }, { id: 'c', type: 'comment', z: 't', x: 1, y: 1, wires: [] }];
  const flowsB = [{ id: 't', type: 'tab' }, { id: 'c', type: 'comment', z: 't', x: 2, y: 1, wires: [] }];
  await deploy(server, flowsA, { api: 'v2', type: 'full', token });
  await deploy(server, flowsB, { api: 'v2', type: 'nodes', token });
  await deploy(server, flowsB, { api: 'v2', type: 'reload', token });
  const [a, b] = [hashOf(flowsA), hashOf(flowsB)];
  assert.deepEqual(auditSince(mark), [
    { level: 45, event: 'flows.set', user: 'admin', ip: '127.0.0.1', type: 'full', rev: { old, new: a }, msg: 'flows deployed' },
    { level: 45, event: 'flows.set', user: 'admin', ip: '127.0.0.1', type: 'nodes', rev: { old: a, new: b }, msg: 'flows deployed' },
    { level: 45, event: 'flows.set', user: 'admin', ip: '127.0.0.1', type: 'reload', rev: { old: b, new: b }, msg: 'flows reloaded' },
  ]);
});

test('module install and removal, and a refused install', { timeout: 120_000 }, async () => {
  const token = (await tokenRequest(server.at, 'admin', ADMIN_PASSWORD)).body.access_token as string;
  const dir = await copyFixture('node-red-contrib-upper', work);
  const mark = server.logs.length;
  const installed = await request(server.at('nodes'), { method: 'POST', json: { module: dir }, token });
  assert.equal(installed.status, 200, installed.text);
  const refused = await request(server.at('nodes'), { method: 'POST', json: { module: '../escape' }, token });
  assert.equal(refused.status, 400);
  const removed = await send(server.at('nodes/node-red-contrib-upper'), { method: 'DELETE', headers: { authorization: `Bearer ${token}` }, from: '127.0.0.34' });
  assert.equal(removed.status, 204, removed.text);
  assert.deepEqual(auditSince(mark), [
    { level: 45, event: 'nodes.install', user: 'admin', ip: '127.0.0.1', requested: dir, module: 'node-red-contrib-upper', version: '1.0.0', outcome: 'ok', msg: 'node module installed' },
    { level: 45, event: 'nodes.install', user: 'admin', ip: '127.0.0.1', requested: '../escape', outcome: 'failed', code: 'invalid_module_name', msg: 'node module install failed' },
    { level: 45, event: 'nodes.remove', user: 'admin', ip: '127.0.0.34', module: 'node-red-contrib-upper', outcome: 'ok', msg: 'node module removed' },
  ]);
});

test('enabling or disabling a node set or module, and deleting a context key, name the user and the client address', async () => {
  const token = (await tokenRequest(server.at, 'admin', ADMIN_PASSWORD)).body.access_token as string;
  const mark = server.logs.length;
  const put = (path: string, enabled: boolean, from: string) =>
    send(server.at(path), { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ enabled }), from });
  const disabled = await put('nodes/node-red/sort', false, '127.0.0.41');
  assert.equal(disabled.status, 200, disabled.text);
  assert.equal((await put('nodes/node-red', true, '127.0.0.42')).status, 200);
  const removed = await send(server.at('context/global/absent'), { method: 'DELETE', headers: { authorization: `Bearer ${token}` }, from: '127.0.0.43' });
  assert.equal(removed.status, 204, removed.text);
  assert.deepEqual(auditSince(mark), [
    { level: 45, event: 'nodes.state', user: 'admin', ip: '127.0.0.41', module: 'node-red', set: 'sort', enabled: false, msg: 'node set disabled' },
    { level: 45, event: 'nodes.state', user: 'admin', ip: '127.0.0.42', module: 'node-red', enabled: true, msg: 'node module enabled' },
    { level: 45, event: 'context.delete', user: 'admin', ip: '127.0.0.43', scope: 'global', store: 'memory', key: 'absent', msg: 'context value deleted' },
  ]);
});
