import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, login, request, type TestServer } from '../helpers/server.js';
import { adminAuth, READER_PASSWORD } from '../helpers/users.js';

const EMPTY_REV = '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const tab = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: 'tab', label: id, ...extra });
const comment = (id: string, z: string, extra: Record<string, unknown> = {}) => ({ id, type: 'comment', z, name: id, x: 10, y: 10, wires: [], ...extra });

describe('GET/POST /flows', () => {
  let server: TestServer;
  let token: string;
  let readerToken: string;
  const v2 = { 'Runtime-API-Version': 'v2' };

  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'test-secret' });
    token = await login(server);
    readerToken = await login(server, 'reader', READER_PASSWORD, 'read');
  });
  after(() => server.dispose());

  test('an empty runtime answers v1 [] and v2 {flows: [], rev} with the hash of []', async () => {
    const r1 = await request(server.at('flows'), { token });
    assert.equal(r1.status, 200);
    assert.deepEqual(r1.body, []);
    const r2 = await request(server.at('flows'), { token, headers: v2 });
    assert.deepEqual(r2.body, { flows: [], rev: EMPTY_REV });
    const nr = await request(server.at('flows'), { token, headers: { 'Node-RED-API-Version': 'v2' } });
    assert.equal(nr.body.rev, EMPTY_REV);
  });

  test('v1 deploy answers 204; v2 read-back has the content hash as rev', async () => {
    const flows = [tab('t1'), comment('c1', 't1')];
    const r = await request(server.at('flows'), { method: 'POST', token, json: flows });
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
    const back = await request(server.at('flows'), { token, headers: v2 });
    assert.deepEqual(back.body.flows, flows);
    assert.equal(back.body.rev, sha(JSON.stringify(flows)));
  });

  test('the stored file and its revision copy are the UTF-8 of the compact JSON the rev hashes, beyond ASCII too', async () => {
    const flows = [tab('t1', { label: 'Küche ✓ 台所 🚰' }), comment('c1', 't1', { info: 'naïve — “quoted” \u2028 text' })];
    const r = await request(server.at('flows'), { method: 'POST', token, headers: v2, json: { flows } });
    assert.equal(r.status, 200);
    const expected = Buffer.from(JSON.stringify(flows));
    assert.equal(r.body.rev, sha(JSON.stringify(flows)));
    for (const file of ['flows.json', path.join('.history', `flows-${r.body.rev}.json`)]) {
      const bytes = await readFile(path.join(server.userDir, file));
      assert.ok(bytes.equals(expected), `${file} holds the deployed document`);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), r.body.rev, `${file} hashes to the rev`);
    }
  });

  test('v2 deploy with the current rev succeeds, a stale rev is 409 and changes nothing, no rev forces', async () => {
    const current = (await request(server.at('flows'), { token, headers: v2 })).body.rev as string;
    const next = [tab('t1'), comment('c1', 't1', { info: 'v2' })];
    const ok = await request(server.at('flows'), { method: 'POST', token, headers: v2, json: { flows: next, rev: current } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { rev: sha(JSON.stringify(next)) });

    const stale = await request(server.at('flows'), { method: 'POST', token, headers: v2, json: { flows: [], rev: current } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.code, 'version_mismatch');
    assert.equal(typeof stale.body.message, 'string');
    assert.deepEqual((await request(server.at('flows'), { token, headers: v2 })).body.flows, next);

    const forced = await request(server.at('flows'), { method: 'POST', token, headers: v2, json: { flows: [tab('t9')] } });
    assert.equal(forced.status, 200);
    assert.equal(forced.body.rev, sha(JSON.stringify([tab('t9')])));
  });

  test('bad API versions and deployment types are 400 with a code', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const r = await request(server.at('flows'), { method, token, headers: { 'Runtime-API-Version': 'v3' }, json: method === 'POST' ? [] : undefined });
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'invalid_api_version');
    }
    const t = await request(server.at('flows'), { method: 'POST', token, headers: { 'Runtime-Deployment-Type': 'bogus' }, json: [] });
    assert.equal(t.status, 400);
    assert.equal(t.body.code, 'invalid_deployment_type');
  });

  test('malformed bodies get a JSON 4xx and leave the configuration untouched', async () => {
    const before = (await request(server.at('flows'), { token, headers: v2 })).body;
    const cases: [RequestInit & { json?: unknown; headers?: Record<string, string> }, number][] = [
      [{ body: '{"broken', headers: { 'content-type': 'application/json' } }, 400],
      [{ body: '[]', headers: { 'content-type': 'text/plain' } }, 415],
      [{ json: { flows: [] } }, 400],
      [{ json: { flows: {} }, headers: v2 }, 400],
      [{ json: {}, headers: v2 }, 400],
      [{ json: [{ type: 'tab' }] }, 400],
      [{ json: [{ id: 'a' }] }, 400],
      [{ json: [{ id: 'a', type: 'tab' }, { id: 'a', type: 'tab' }] }, 400],
      [{ json: [{ id: 'a', type: 'x', wires: 'nope' }] }, 400],
      [{ json: [null] }, 400],
      [{ json: { flows: [], credentials: [] }, headers: v2 }, 400],
      [{ json: { flows: [], rev: 5 }, headers: v2 }, 400],
    ];
    for (const [init, status] of cases) {
      const r = await request(server.at('flows'), { method: 'POST', token, ...init });
      assert.equal(r.status, status, `${JSON.stringify(init)} -> ${r.status} ${r.text}`);
      assert.equal(typeof r.body?.code, 'string', r.text);
      assert.equal(typeof r.body?.message, 'string', r.text);
    }
    assert.deepEqual((await request(server.at('flows'), { token, headers: v2 })).body, before);
  });

  test('an over-size body is 413 JSON', async () => {
    const huge = JSON.stringify([{ id: 'x', type: 'comment', info: 'a'.repeat(6 * 1024 * 1024) }]);
    const r = await request(server.at('flows'), { method: 'POST', token, body: huge, headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 413);
    assert.equal(r.body.code, 'payload_too_large');
  });

  test('permissions: no token 401 with WWW-Authenticate, reader may read but not deploy', async () => {
    const anon = await request(server.at('flows'));
    assert.equal(anon.status, 401);
    assert.match(anon.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal(anon.body.code, 'unauthorized');
    assert.equal((await request(server.at('flows'), { token: readerToken })).status, 200);
    const denied = await request(server.at('flows'), { method: 'POST', token: readerToken, json: [] });
    assert.equal(denied.status, 401);
    assert.match(denied.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    const bogus = await request(server.at('flows'), { token: 'not-a-token' });
    assert.equal(bogus.status, 401);
    assert.match(bogus.headers.get('www-authenticate') ?? '', /invalid_token/);
  });

  test('reload ignores the body and answers the current rev', async () => {
    const current = (await request(server.at('flows'), { token, headers: v2 })).body.rev;
    const r = await request(server.at('flows'), { method: 'POST', token, headers: { ...v2, 'Runtime-Deployment-Type': 'reload' }, json: { flows: 'ignored' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.rev, current);
    const v1 = await request(server.at('flows'), { method: 'POST', token, headers: { 'Node-RED-Deployment-Type': 'reload' } });
    assert.equal(v1.status, 204);
  });

  test('unknown node types are stored and reported in /flows/state', async () => {
    const flows = [tab('t1'), { id: 'u1', type: 'no-such-type', z: 't1', x: 1, y: 1, wires: [] }];
    const r = await request(server.at('flows'), { method: 'POST', token, headers: v2, json: { flows } });
    assert.equal(r.status, 200);
    const state = await request(server.at('flows/state'), { token });
    assert.deepEqual(state.body, { state: 'start', missingTypes: ['no-such-type'] });
  });
});
