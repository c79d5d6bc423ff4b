import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';

/**
 * A catch-all flow route (`/*`, `/:a/:b`) on the root that holds the admin API never answers a
 * request for an admin path, however it is spelt: `//flows`, `/flows%2f`, `PUT /flows`,
 * `GET /auth/token` and `/credentials/...` paths longer than the admin router's parameter limit
 * all reached the flow, with the admin's bearer token.
 */

/** One request with `path` sent as it is (no URL resolution of `.` or `..`). */
function raw(base: string, path: string, method: string, headers: http.OutgoingHttpHeaders): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

const catchAll = (method: string, url: string, n: number) => ({ id: `in${n}`, type: 'http in', z: 't', url, method, wires: [['fn']] });

for (const roots of [{ httpAdminRoot: '/', httpNodeRoot: '/' }, { httpAdminRoot: '/admin', httpNodeRoot: '/' }]) {
  describe(`admin paths never reach a catch-all flow route (admin ${roots.httpAdminRoot}, nodes ${roots.httpNodeRoot})`, () => {
    const prefix = roots.httpAdminRoot === '/' ? '' : roots.httpAdminRoot;
    let server: TestServer;
    let token: string;
    before(async () => {
      server = await startServer({ ...roots, adminAuth: adminAuth(), logging: { level: 'fatal' } });
      token = await login(server);
      const flows = [
        { id: 't', type: 'tab' },
        ...['get', 'put', 'post', 'delete'].map((m, i) => catchAll(m, '/*', i)),
        catchAll('get', '/:a/:b', 9),
        { id: 'button', type: 'inject', z: 't', x: 1, y: 1, wires: [[]] },
        { id: 'fn', type: 'function', z: 't', func: "if (msg.req.headers.authorization) global.set('tokens', (global.get('tokens') || 0) + 1); msg.payload = 'flow'; return msg;", wires: [['out']] },
        { id: 'out', type: 'http response', z: 't', wires: [] },
      ];
      const r = await request(server.at('flows'), { method: 'POST', json: flows, token });
      assert.equal(r.status, 204, r.text);
    });
    after(() => server.dispose());

    it('refuses admin paths in every spelling and method, before a flow sees the token', async () => {
      const long = `/credentials/http-request/${'a'.repeat(600)}`;
      // A method the admin path does not take is 405 (with Allow), another spelling of one it takes 404.
      const cases: [string, string, number][] = [
        ['GET', '//flows', 404],
        ['GET', '/flows%2f', 404],
        ['GET', '/flows%2F', 404],
        ['GET', '/flows//', 404],
        ['PUT', '/flows', 405],
        ['DELETE', '/flows/', 405],
        ['GET', '/auth/token', 405],
        ['GET', long, 404],
        ['GET', '/./flows', 404],
        ['GET', '/x/../flows', 404],
        ['GET', '/%2e/flows', 404],
        ['GET', '/flows;x', 404],
        ['PUT', '/Settings/User', 405],
        ['PATCH', '/FLOWS', 405],
      ];
      for (const [method, path, status] of cases) {
        const r = await raw(server.url, prefix + path, method, { authorization: `Bearer ${token}` });
        assert.notEqual(r.text, 'flow', `${method} ${path.slice(0, 60)}`);
        assert.equal(r.status, status, `${method} ${path.slice(0, 60)}: ${r.text.slice(0, 200)}`);
        assert.equal(JSON.parse(r.text).code, status === 404 ? 'not_found' : 'method_not_allowed');
      }
      const seen = await request(server.at('context/global/tokens'), { token });
      assert.equal(seen.status, 200, seen.text);
      assert.equal(seen.body.format, 'undefined', 'a flow route saw the admin token');
    });

    it('the flow routes and the routes nodes add keep answering', async () => {
      for (const path of ['/hello', '/hello/world', '/flowsx', '/auth']) {
        const r = await raw(server.url, prefix + path, 'GET', {});
        assert.equal(r.text, 'flow', path);
      }
      assert.equal((await raw(server.url, `${prefix}/x`, 'PUT', {})).text, 'flow');
      assert.equal((await raw(server.url, `${prefix}/inject/button`, 'POST', { authorization: `Bearer ${token}` })).status, 200);
      assert.equal((await request(server.at('flows'), { token })).status, 200);
    });
  });
}
