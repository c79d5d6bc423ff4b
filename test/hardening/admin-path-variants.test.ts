import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';

/**
 * Spellings of admin paths that still reached a catch-all flow route (`/*`) on the root that holds
 * the admin API: `/flows%00`, `/flows.json`, `/\flows`, `/flows%252f`, and methods the admin route
 * does not take on `/comms` and on the module routes (`/nodes/...`).
 */

/** One request written byte for byte (no client normalises the path); status, headers and body. */
function raw(base: string, path: string, method: string, token: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body });
    });
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  });
}

for (const roots of [{ httpAdminRoot: '/', httpNodeRoot: '/' }, { httpAdminRoot: '/admin', httpNodeRoot: '/' }]) {
  describe(`admin path variants never reach a catch-all flow route (admin ${roots.httpAdminRoot}, nodes ${roots.httpNodeRoot})`, () => {
    const prefix = roots.httpAdminRoot === '/' ? '' : roots.httpAdminRoot;
    let server: TestServer;
    let token: string;
    before(async () => {
      server = await startServer({ ...roots, adminAuth: adminAuth(), logging: { level: 'fatal' } });
      token = await login(server);
      const flows = [
        { id: 't', type: 'tab' },
        ...['get', 'put', 'post', 'delete', 'patch'].map((method, i) => ({ id: `in${i}`, type: 'http in', z: 't', url: '/*', method, wires: [['fn']] })),
        { id: 'fn', type: 'function', z: 't', func: "msg.payload = 'flow'; return msg;", wires: [['out']] },
        { id: 'out', type: 'http response', z: 't', wires: [] },
      ];
      const r = await request(server.at('flows'), { method: 'POST', json: flows, token });
      assert.equal(r.status, 204, r.text);
    });
    after(() => server.dispose());

    it('a path with NUL or a backslash gets 400', async () => {
      for (const path of ['/flows%00', '/\\flows', '/flows%5c', '/%5Cflows', '/x/%00']) {
        const r = await raw(server.url, prefix + path, 'GET', token);
        assert.equal(r.status, 400, `${path}: ${r.head} ${r.body}`);
        assert.equal(JSON.parse(r.body).code, 'invalid_request', path);
      }
    });

    it('an admin path with an extension or encoded twice is the admin API\'s', async () => {
      for (const path of ['/flows.json', '/settings.json', '/flows%252f', '/flows%252F', '/%252fflows', '/nodes.json']) {
        const r = await raw(server.url, prefix + path, 'GET', token);
        assert.notEqual(r.body, 'flow', path);
        assert.deepEqual([r.status, JSON.parse(r.body).code], [404, 'not_found'], path);
      }
    });

    it('a method an admin route does not take gets 405 with Allow, on /comms and the module routes too', async () => {
      const cases: [string, string, string[]][] = [
        ['PUT', '/flows', ['GET', 'POST']],
        ['PATCH', '/FLOWS', ['GET', 'POST']],
        ['POST', '/comms', ['GET']],
        ['DELETE', '/comms', ['GET']],
        ['PATCH', '/nodes/node-red', ['DELETE', 'GET', 'PUT']],
        ['POST', '/nodes/node-red/inject', ['GET', 'PUT']],
      ];
      for (const [method, path, allowed] of cases) {
        const r = await raw(server.url, prefix + path, method, token);
        assert.notEqual(r.body, 'flow', `${method} ${path}`);
        assert.deepEqual([r.status, JSON.parse(r.body).code], [405, 'method_not_allowed'], `${method} ${path}: ${r.body}`);
        const allow = /\r\nallow: ([^\r]*)/i.exec(r.head)?.[1].split(/,\s*/).filter((m) => m !== 'HEAD').sort();
        assert.deepEqual(allow, allowed, `${method} ${path}`);
      }
      const comms = await raw(server.url, `${prefix}/comms`, 'GET', token);
      assert.deepEqual([comms.status, JSON.parse(comms.body).code], [404, 'not_found'], 'GET /comms without an upgrade');
    });

    it('the flow routes keep answering their own paths', async () => {
      for (const [method, path] of [['GET', '/hello'], ['GET', '/flowsx.json'], ['PUT', '/x'], ['PATCH', '/a/b'], ['GET', '/comm']]) {
        const r = await raw(server.url, prefix + path, method, token);
        assert.equal(r.body, 'flow', `${method} ${path}: ${r.head}`);
      }
    });
  });
}
