import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startServer, login, request, adminAuth, READER_PASSWORD, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

const sha = (s: unknown) => createHash('sha256').update(JSON.stringify(s)).digest('hex');
const v2 = { 'Runtime-API-Version': 'v2' };
const tab = (id: string) => ({ id, type: 'tab', label: id });
const comment = (id: string, z: string, extra: Record<string, unknown> = {}) => ({ id, type: 'comment', z, name: id, x: 10, y: 10, wires: [], ...extra });
const client = (user: string) => ({ id: 'hr', type: 'http request', z: 't1', method: 'GET', url: 'http://127.0.0.1:9/', authType: 'basic', x: 1, y: 1, wires: [], credentials: { user, password: `${user}-pw` } });

describe('revision history and rollback over HTTP', () => {
  let server: TestServer;
  let token: string;
  let reader: string;
  const history = async (query = '') => (await request(server.at(`flows/history${query}`), { token: reader })).body;

  const A = [tab('t1'), comment('c1', 't1'), client('alice')];
  const B = [tab('t1'), comment('c1', 't1', { info: 'changed' }), comment('c2', 't1'), { ...client('bob'), wires: [['c2']] }];
  const C = [tab('t1'), comment('c2', 't1'), tab('t2')];
  const plain = (flows: unknown[]) => flows.map((n) => { const { credentials: _, ...rest } = n as Record<string, unknown>; return rest; });

  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'history-secret', flowHistory: { max: 4 } });
    token = await login(server);
    reader = await login(server, 'reader', READER_PASSWORD, 'read');
  });
  after(() => server.dispose());

  test('every deploy records a revision: rev, time, user, type, node count, per-tab summary; newest first', async () => {
    const revA = await deploy(server, A, { api: 'v2', token });
    const revB = await deploy(server, B, { api: 'v2', token, type: 'nodes' });
    const body = await history();
    assert.deepEqual(body.revisions.map((r: { rev: string }) => r.rev), [revB, revA]);
    const [b, a] = body.revisions;
    assert.equal(revA, sha(plain(A)));
    assert.equal(a.user, 'admin');
    assert.equal(a.type, 'full');
    assert.equal(a.action, 'deploy');
    assert.equal(a.nodeCount, 3);
    assert.deepEqual(a.summary, { t1: { added: 3, changed: 0, removed: 0 } });
    assert.equal(b.type, 'nodes');
    assert.equal(b.prevRev, revA);
    assert.deepEqual(b.summary, { t1: { added: 1, changed: 2, removed: 0 } });
    assert.ok(Math.abs(b.time - Date.now()) < 60_000);
    assert.equal(body.next, undefined);
  });

  test('pages: limit and the next cursor', async () => {
    await deploy(server, C, { api: 'v2', token });
    const first = await history('?limit=2');
    assert.equal(first.revisions.length, 2);
    assert.equal(typeof first.next, 'number');
    const second = await history(`?limit=2&before=${first.next}`);
    assert.equal(second.revisions.length, 1);
    assert.equal(second.next, undefined);
    assert.ok(second.revisions[0].seq < first.revisions[1].seq);
  });

  test('GET /flows/history/:rev answers the flows, never credentials', async () => {
    const r = await request(server.at(`flows/history/${sha(plain(A))}`), { token: reader });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.flows, plain(A));
    assert.ok(!r.text.includes('alice-pw') && !r.text.includes('"credentials"'));
  });

  test('the diff lists added, removed, changed (with property names) and rewired nodes in a stable order', async () => {
    const r = await request(server.at(`flows/history/${sha(plain(A))}/diff?to=${sha(plain(B))}`), { token: reader });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.changes, [
      { id: 'c1', type: 'comment', z: 't1', change: 'changed', properties: ['info'] },
      { id: 'c2', type: 'comment', z: 't1', change: 'added' },
      { id: 'hr', type: 'http request', z: 't1', change: 'rewired' },
    ]);
    const back = await request(server.at(`flows/history/${sha(plain(B))}/diff?to=${sha(plain(C))}`), { token: reader });
    assert.deepEqual(back.body.changes.map((c: { id: string; change: string }) => `${c.id}:${c.change}`), ['t2:added', 'c1:removed', 'hr:removed']);
  });

  test('rollback deploys the old content as a new revision with its credentials, audit-logged', async () => {
    const current = (await request(server.at('flows'), { token, headers: v2 })).body.rev;
    const mark = server.logs.length;
    const r = await request(server.at('flows/rollback'), { method: 'POST', token, headers: { 'Runtime-Deployment-Type': 'flows' }, json: { rev: sha(plain(A)), expectedRev: current } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { rev: sha(plain(A)) });
    const now = await request(server.at('flows'), { token, headers: v2 });
    assert.deepEqual(now.body, { flows: plain(A), rev: sha(plain(A)) });
    const creds = await request(server.at('credentials/http-request/hr'), { token });
    assert.deepEqual(creds.body, { user: 'alice', has_password: true });
    const [newest] = (await history()).revisions;
    assert.equal(newest.action, 'rollback');
    assert.equal(newest.type, 'flows');
    assert.equal(newest.rev, sha(plain(A)));
    assert.equal(newest.prevRev, current);
    const audit = server.logs.slice(mark).map((l) => JSON.parse(l)).find((l) => l.event === 'flows.rollback');
    assert.equal(audit?.user, 'admin');
    assert.deepEqual(audit?.rev, { old: current, new: sha(plain(A)) });
  });

  test('rollback refuses a stale expectedRev (409), an unknown rev (404), a malformed body (400), a reader (401) and reload', async () => {
    const before = await request(server.at('flows'), { token, headers: v2 });
    const stale = await request(server.at('flows/rollback'), { method: 'POST', token, json: { rev: sha(plain(B)), expectedRev: sha([]) } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.code, 'version_mismatch');
    const unknown = await request(server.at('flows/rollback'), { method: 'POST', token, json: { rev: 'a'.repeat(64) } });
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'not_found']);
    for (const json of [{}, { rev: 'nope' }, { rev: 42 }, []]) {
      const bad = await request(server.at('flows/rollback'), { method: 'POST', token, json });
      assert.deepEqual([bad.status, bad.body.code], [400, 'invalid_request'], JSON.stringify(json));
    }
    const denied = await request(server.at('flows/rollback'), { method: 'POST', token: reader, json: { rev: sha(plain(B)) } });
    assert.deepEqual([denied.status, denied.body.code], [401, 'insufficient_scope']);
    const reload = await request(server.at('flows/rollback'), { method: 'POST', token, headers: { 'Runtime-Deployment-Type': 'reload' }, json: { rev: sha(plain(B)) } });
    assert.deepEqual([reload.status, reload.body.code], [400, 'invalid_deployment_type']);
    assert.deepEqual((await request(server.at('flows'), { token, headers: v2 })).body, before.body);
  });

  test('history routes: bad revs and queries are 400, unknown revs 404, no token 401', async () => {
    const cases: [string, number, string][] = [
      ['flows/history/xyz', 400, 'invalid_request'],
      [`flows/history/${'b'.repeat(64)}`, 404, 'not_found'],
      [`flows/history/${sha(plain(A))}/diff`, 400, 'invalid_request'],
      [`flows/history/${sha(plain(A))}/diff?to=${'c'.repeat(64)}`, 404, 'not_found'],
      ['flows/history?limit=0', 400, 'invalid_request'],
      ['flows/history?limit=abc', 400, 'invalid_request'],
    ];
    for (const [p, status, code] of cases) {
      const r = await request(server.at(p), { token: reader });
      assert.deepEqual([r.status, r.body?.code], [status, code], p);
    }
    const anonymous = await request(server.at('flows/history'));
    assert.equal(anonymous.status, 401);
  });

  test('a reload records a revision; flowHistory.max bounds the history; it survives a restart', async () => {
    const r = await request(server.at('flows'), { method: 'POST', token, headers: { ...v2, 'Runtime-Deployment-Type': 'reload' } });
    assert.equal(r.status, 200);
    const body = await history('?limit=50');
    assert.equal(body.revisions[0].action, 'reload');
    assert.equal(body.revisions[0].type, 'reload');
    assert.equal(body.revisions.length, 4);
    const userDir = server.userDir;
    await server.stop();
    server = await startServer({ adminAuth: adminAuth(), credentialSecret: 'history-secret', flowHistory: { max: 4 } }, userDir);
    token = await login(server);
    reader = await login(server, 'reader', READER_PASSWORD, 'read');
    assert.deepEqual(await history('?limit=50'), body);
    const rolled = await request(server.at('flows/rollback'), { method: 'POST', token, json: { rev: sha(plain(B)) } });
    assert.equal(rolled.status, 200, rolled.text);
    assert.deepEqual((await request(server.at('credentials/http-request/hr'), { token })).body, { user: 'bob', has_password: true });
  });
});
