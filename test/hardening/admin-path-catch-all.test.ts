import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';

/**
 * A catch-all flow route (`/*`, `/:a/:b`) on the root that holds the admin API never answers a
 * request for an admin path, however it is spelt: `//flows`, `/flows%2f`, `PUT /flows`,
 * `GET /auth/token` and `/credentials/...` paths longer than the admin router's parameter limit
 * all reached the flow, with the admin's bearer token; so did `/flows%00`, `/\flows`,
 * `/flows.json`, `/flows%252f` (escaped twice) and the methods `/comms` and the module routes
 * (`/nodes/...`) do not take.
 */

/** One request with `path` sent as it is (no URL resolution of `.` or `..`). */
function raw(base: string, path: string, method: string, headers: http.OutgoingHttpHeaders): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
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
        ...['get', 'put', 'post', 'delete', 'patch'].map((m, i) => catchAll(m, '/*', i)),
        catchAll('get', '/:a/:b', 9),
        { id: 'button', type: 'inject', z: 't', x: 1, y: 1, wires: [[]] },
        { id: 'fn', type: 'function', z: 't', func: "if (msg.req.headers.authorization) global.set('tokens', (global.get('tokens') || 0) + 1); msg.payload = 'flow'; return msg;", wires: [['out']] },
        { id: 'out', type: 'http response', z: 't', wires: [] },
      ];
      const r = await request(server.at('flows'), { method: 'POST', json: flows, token });
      assert.equal(r.status, 204, r.text);
    });
    after(() => server.dispose());

    /** Sends each case with the admin's token: none may reach the flow, which would count the token. */
    async function refused(cases: [method: string, path: string, status: number, code: string][]): Promise<http.IncomingHttpHeaders[]> {
      const headers: http.IncomingHttpHeaders[] = [];
      for (const [method, path, status, code] of cases) {
        const r = await raw(server.url, prefix + path, method, { authorization: `Bearer ${token}` });
        const what = `${method} ${path.slice(0, 60)}`;
        assert.notEqual(r.text, 'flow', what);
        assert.deepEqual([r.status, JSON.parse(r.text).code], [status, code], `${what}: ${r.text.slice(0, 200)}`);
        headers.push(r.headers);
      }
      const seen = await request(server.at('context/global/tokens'), { token });
      assert.equal(seen.status, 200, seen.text);
      assert.equal(seen.body.format, 'undefined', 'a flow route saw the admin token');
      return headers;
    }

    it('refuses admin paths in every spelling, before a flow sees the token', async () => {
      const long = `/credentials/http-request/${'a'.repeat(600)}`;
      const spellings = ['//flows', '/flows%2f', '/flows%2F', '/flows//', long, '/./flows', '/x/../flows', '/%2e/flows', '/flows;x'];
      // An extension on the last segment, or escapes encoded twice, still name the admin path.
      const more = ['/flows.json', '/settings.json', '/nodes.json', '/flows%252f', '/flows%252F', '/%252fflows'];
      await refused([...spellings, ...more].map((path) => ['GET', path, 404, 'not_found']));
    });

    it('a path with NUL or a backslash gets 400', async () => {
      await refused(['/flows%00', '/\\flows', '/flows%5c', '/%5Cflows', '/x/%00'].map((path) => ['GET', path, 400, 'invalid_request']));
    });

    it('a method an admin path does not take gets 405 with Allow, on /comms and the module routes too', async () => {
      const cases: [string, string, string[]][] = [
        ['PUT', '/flows', ['GET', 'POST']],
        ['DELETE', '/flows/', ['GET', 'POST']],
        ['PATCH', '/FLOWS', ['GET', 'POST']],
        ['GET', '/auth/token', ['POST']],
        ['PUT', '/Settings/User', ['GET', 'POST']],
        ['POST', '/comms', ['GET']],
        ['DELETE', '/comms', ['GET']],
        ['PATCH', '/nodes/node-red', ['DELETE', 'GET', 'PUT']],
        ['POST', '/nodes/node-red/inject', ['GET', 'PUT']],
      ];
      const headers = await refused(cases.map(([method, path]) => [method, path, 405, 'method_not_allowed']));
      cases.forEach(([method, path, allowed], i) => {
        const allow = String(headers[i].allow).split(/,\s*/).filter((m) => m !== 'HEAD').sort();
        assert.deepEqual(allow, allowed, `Allow for ${method} ${path}`);
      });
      const comms = await raw(server.url, `${prefix}/comms`, 'GET', { authorization: `Bearer ${token}` });
      assert.deepEqual([comms.status, JSON.parse(comms.text).code], [404, 'not_found'], 'GET /comms without an upgrade');
    });

    it('the flow routes and the routes nodes add keep answering', async () => {
      for (const [method, path] of [['GET', '/hello'], ['GET', '/hello/world'], ['GET', '/flowsx'], ['GET', '/flowsx.json'], ['GET', '/auth'], ['GET', '/comm'], ['PUT', '/x'], ['PATCH', '/a/b']]) {
        const r = await raw(server.url, prefix + path, method, {});
        assert.equal(r.text, 'flow', `${method} ${path}`);
      }
      assert.equal((await raw(server.url, `${prefix}/inject/button`, 'POST', { authorization: `Bearer ${token}` })).status, 200);
      assert.equal((await request(server.at('flows'), { token })).status, 200);
    });
  });
}
