import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, login, request, adminAuth, READER_PASSWORD } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

const audits = (logs: string[]) => logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => typeof l.event === 'string' && String(l.event).startsWith('auth.token'));

describe('automation tokens', () => {
  test('an admin issues a scoped token shown once; it works within its scope, is listed without secrets, hashed at rest, audit-logged, revocable, and survives a restart', async () => {
    let server = await startServer({ adminAuth: adminAuth() });
    try {
      const admin = await login(server);
      const created = await request(server.at('auth/tokens'), { method: 'POST', token: admin, json: { name: 'ci', scope: 'flows.read flows.write' } });
      assert.equal(created.status, 200, created.text);
      const { token, id, ...info } = created.body;
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      assert.deepEqual({ ...info, created: 0 }, { name: 'ci', scope: ['flows.read', 'flows.write'], created: 0, createdBy: 'admin' });

      assert.equal((await request(server.at('flows'), { token })).status, 200);
      await deploy(server, [{ id: 't1', type: 'tab', label: 'ci' }], { api: 'v2', token });
      assert.equal((await request(server.at('flows/history'), { token })).body.revisions[0].user, 'token:ci');
      const beyond = await request(server.at('nodes'), { token });
      assert.deepEqual([beyond.status, beyond.body.code], [401, 'insufficient_scope']);

      const listed = await request(server.at('auth/tokens'), { token: admin });
      assert.deepEqual(listed.body.tokens.map((t: { id: string; name: string }) => [t.id, t.name]), [[id, 'ci']]);
      assert.ok(!listed.text.includes(token) && !listed.text.includes('tokenHash'));
      const stored = await readFile(path.join(server.userDir, '.sessions.json'), 'utf8');
      assert.ok(!stored.includes(token));
      assert.ok(stored.includes(createHash('sha256').update(token).digest('hex')));
      assert.deepEqual(audits(server.logs).map((l) => [l.event, l.name]), [['auth.token.create', 'ci'], ['auth.token.use', 'ci'], ['auth.token.use', 'ci'], ['auth.token.use', 'ci'], ['auth.token.use', 'ci']]);

      const userDir = server.userDir;
      await server.stop();
      server = await startServer({ adminAuth: adminAuth() }, userDir);
      assert.equal((await request(server.at('flows'), { token })).status, 200, 'the token survives a restart');
      const admin2 = await login(server);
      const revoked = await request(server.at(`auth/tokens/${id}`), { method: 'DELETE', token: admin2 });
      assert.equal(revoked.status, 204);
      const after = await request(server.at('flows'), { token });
      assert.deepEqual([after.status, after.body.code], [401, 'invalid_token']);
      assert.ok(audits(server.logs).some((l) => l.event === 'auth.token.revoke' && l.id === id && l.username === 'admin'));
      const again = await request(server.at(`auth/tokens/${id}`), { method: 'DELETE', token: admin2 });
      assert.deepEqual([again.status, again.body.code], [404, 'not_found']);
    } finally {
      await server.dispose();
    }
  });

  test('creation needs tokens.write, stays within the creator\'s scope, and refuses bad input with 400', async () => {
    const server = await startServer({ adminAuth: adminAuth() });
    try {
      const reader = await login(server, 'reader', READER_PASSWORD, 'read');
      const denied = await request(server.at('auth/tokens'), { method: 'POST', token: reader, json: { name: 'x', scope: 'read' } });
      assert.deepEqual([denied.status, denied.body.code], [401, 'insufficient_scope']);
      assert.equal((await request(server.at('auth/tokens'), { token: reader })).status, 200, 'read covers tokens.read');
      const limited = await login(server, 'admin', undefined, 'tokens.write flows.read');
      const escalate = await request(server.at('auth/tokens'), { method: 'POST', token: limited, json: { name: 'x', scope: ['flows.read', 'nodes.write'] } });
      assert.deepEqual([escalate.status, escalate.body.code], [403, 'forbidden']);
      const ok = await request(server.at('auth/tokens'), { method: 'POST', token: limited, json: { name: 'short', scope: ['flows.read'], expiresIn: 60 } });
      assert.equal(ok.status, 200);
      assert.ok(ok.body.expires > Date.now() && ok.body.expires <= Date.now() + 61_000);
      const admin = await login(server);
      for (const json of [{ scope: 'read' }, { name: 'x' }, { name: '', scope: 'read' }, { name: 'x', scope: [] }, { name: 'x', scope: ['bad perm'] }, { name: 'x', scope: '   ' }, { name: 'x', scope: 'read', expiresIn: 0 }]) {
        const r = await request(server.at('auth/tokens'), { method: 'POST', token: admin, json });
        assert.deepEqual([r.status, r.body?.code], [400, 'invalid_request'], JSON.stringify(json));
      }
    } finally {
      await server.dispose();
    }
  });

  test("Node-RED's adminAuth.tokens function and adminAuth.default permissions", async () => {
    const server = await startServer({
      adminAuth: adminAuth({
        tokens: async (token: string) => (token === 'external-secret' ? { username: 'ext', permissions: ['flows.read'] } : null),
        default: { permissions: 'read' },
      }),
    });
    try {
      assert.equal((await request(server.at('flows'))).status, 200, 'anonymous may read');
      const anonymousWrite = await request(server.at('flows'), { method: 'POST', json: [] });
      assert.deepEqual([anonymousWrite.status, anonymousWrite.body.code], [401, 'unauthorized']);
      assert.equal((await request(server.at('flows'), { token: 'external-secret' })).status, 200);
      const extWrite = await request(server.at('flows'), { method: 'POST', token: 'external-secret', json: [] });
      assert.deepEqual([extWrite.status, extWrite.body.code], [401, 'insufficient_scope']);
      const unknown = await request(server.at('flows'), { token: 'someone-else' });
      assert.deepEqual([unknown.status, unknown.body.code], [401, 'invalid_token']);
    } finally {
      await server.dispose();
    }
  });

  test('with authentication off the token routes answer 404', async () => {
    const server = await startServer();
    try {
      for (const [method, p] of [['GET', 'auth/tokens'], ['POST', 'auth/tokens'], ['DELETE', 'auth/tokens/x']] as const) {
        const r = await request(server.at(p), { method, ...(method === 'POST' ? { json: { name: 'x', scope: 'read' } } : {}) });
        assert.deepEqual([r.status, r.body.code], [404, 'not_found'], `${method} ${p}`);
      }
    } finally {
      await server.dispose();
    }
  });
});
