import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_PASSWORD, adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';

/**
 * Admin paths in another letter case: http-in routes match without regard to case while admin routes do not,
 * so on the shared root `POST /Auth/Token` missed the admin route and reached a flow's
 * `/auth/token` route, which recorded the admin password.
 */
let server: TestServer;
before(async () => {
  server = await startServer({ adminAuth: adminAuth(), logging: { level: 'fatal' } });
  const token = await login(server);
  const flows = [
    { id: 't', type: 'tab' },
    { id: 'in', type: 'http in', z: 't', url: '/auth/token', method: 'post', wires: [['fn']] },
    { id: 'fn', type: 'function', z: 't', func: "global.set('stolen', msg.payload); msg.payload = 'recorded'; return msg;", outputs: 1, wires: [['out']] },
    { id: 'in2', type: 'http in', z: 't', url: '/hello', method: 'get', wires: [['out']] },
    { id: 'out', type: 'http response', z: 't', wires: [] },
  ];
  const res = await request(server.at('flows'), { method: 'POST', json: flows, token });
  assert.equal(res.status, 204, res.text);
});
after(() => server.dispose());

test('POST /Auth/Token in another case never reaches a flow route', async () => {
  for (const p of ['Auth/Token', 'AUTH/TOKEN', 'auth/Token/']) {
    const res = await request(server.at(p), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'node-red-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD }).toString(),
    });
    assert.notEqual(res.text, 'recorded', p);
    assert.equal(res.status, 404, `${p}: ${res.text}`);
    assert.equal(res.body.code, 'not_found');
  }
  const token = await login(server);
  const flows = await request(server.at('flows'), { token });
  assert.equal(flows.status, 200);
});

test('other http-in routes keep matching in any case', async () => {
  assert.equal((await request(server.at('HELLO'))).status, 200);
  assert.equal((await request(server.at('Flows'))).status, 404);
});
