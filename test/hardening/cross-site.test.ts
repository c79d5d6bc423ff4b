import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { login, startServer, adminAuth, type TestServer } from '../helpers/server.js';
import { rawTarball } from '../registry/support.js';
import { send } from './support.js';
import WebSocket from 'ws';

/**
 * Cross-site requests: with no adminAuth (the default) a web page on another origin installed a
 * module through a multipart POST /nodes (no CORS preflight needed), and DNS rebinding read
 * GET /flows. The editor (same-origin) and CLI tools (no Origin) must keep working.
 */
const EVIL = 'http://evil.example';

function multipart(file: Buffer) {
  const boundary = `----runnel${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="tarball"; filename="m.tgz"\r\nContent-Type: application/gzip\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

function markerModule(marker: string): Buffer {
  const pkg = JSON.stringify({ name: 'node-red-contrib-drive-by', version: '1.0.0', 'node-red': { nodes: { x: 'x.js' } } });
  const code = `require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned'); module.exports = function (RED) {};`;
  return rawTarball([{ path: 'package/package.json', body: pkg }, { path: 'package/x.js', body: code }]);
}

const host = (server: TestServer) => new URL(server.url).host;
const deployBody = JSON.stringify([{ id: 't1', type: 'tab', label: 'x' }]);

describe('cross-site requests without adminAuth', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ httpAdminAllowedHosts: ['runnel.lan', '*.corp.example'] });
  });
  after(() => server.dispose());

  test('a cross-site multipart POST /nodes is refused and installs nothing', async () => {
    const marker = path.join(server.userDir, 'drive-by-marker');
    const { body, type } = multipart(markerModule(marker));
    const res = await send(server.at('nodes'), { method: 'POST', body, headers: { 'content-type': type, origin: EVIL, 'sec-fetch-site': 'cross-site' } });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.code, 'cross_site_request');
    assert.equal(existsSync(marker), false, 'the uploaded module ran');
    const nodes = await send(server.at('nodes/node-red-contrib-drive-by'));
    assert.equal(nodes.status, 404);
  });

  test('a cross-site form POST with only Sec-Fetch-Site is refused', async () => {
    const res = await send(server.at('flows'), { method: 'POST', body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'cross_site_request');
  });

  test('another port on the same host is another origin', async () => {
    const res = await send(server.at('flows'), { method: 'POST', body: deployBody, headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' } });
    assert.equal(res.status, 403);
  });

  test('an Origin of "null" (sandboxed frame, file page) is refused', async () => {
    const res = await send(server.at('flows'), { method: 'POST', body: deployBody, headers: { 'content-type': 'application/json', origin: 'null' } });
    assert.equal(res.status, 403);
  });

  test('same-origin requests (the editor) and requests without Origin (CLI tools) deploy', async () => {
    const own = await send(server.at('flows'), { method: 'POST', body: deployBody, headers: { 'content-type': 'application/json', origin: `http://${host(server)}`, 'sec-fetch-site': 'same-origin' } });
    assert.equal(own.status, 204, own.text);
    const cli = await send(server.at('flows'), { method: 'POST', body: deployBody, headers: { 'content-type': 'application/json' } });
    assert.equal(cli.status, 204, cli.text);
  });

  test('DNS rebinding: GET /flows under a foreign Host is refused', async () => {
    const port = new URL(server.url).port;
    const res = await send(server.at('flows'), { headers: { host: `attacker.example:${port}` } });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'host_not_allowed');
    assert.ok(!res.text.includes('"tab"'));
    for (const ok of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `10.0.0.5:${port}`, `runnel.lan:${port}`, `node.corp.example`]) {
      const allowed = await send(server.at('flows'), { headers: { host: ok } });
      assert.equal(allowed.status, 200, `${ok}: ${allowed.text}`);
    }
  });

  test('the editor websocket: a page of another origin cannot open /comms; the editor can', async () => {
    const open = (origin: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(server.at('comms').replace('http', 'ws'), { origin });
        ws.on('open', () => {
          ws.close();
          resolve(101);
        });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('error', () => resolve(0));
      });
    assert.equal(await open(EVIL), 403);
    assert.equal(await open(`http://${host(server)}`), 101);
  });

  test('http-in routes on the shared root still take cross-site posts (webhooks)', async () => {
    const flows = [
      { id: 't2', type: 'tab', label: 'hook' },
      { id: 'in', type: 'http in', z: 't2', url: '/hook', method: 'post', wires: [['out']] },
      { id: 'out', type: 'http response', z: 't2', wires: [] },
    ];
    const deployed = await send(server.at('flows'), { method: 'POST', body: JSON.stringify(flows), headers: { 'content-type': 'application/json' } });
    assert.equal(deployed.status, 204);
    const res = await send(server.at('hook'), { method: 'POST', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: EVIL, 'sec-fetch-site': 'cross-site' } });
    assert.equal(res.status, 200);
  });
});

describe('cross-site requests with adminAuth', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), httpAdminCors: { origin: 'https://ui.example' } });
  });
  after(() => server.dispose());

  test('an allowed CORS origin may deploy; another origin may not, even with a token', async () => {
    const token = await login(server);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const cors = await send(server.at('flows'), { method: 'POST', body: deployBody, headers: { ...headers, origin: 'https://ui.example' } });
    assert.equal(cors.status, 204, cors.text);
    const evil = await send(server.at('flows'), { method: 'POST', body: deployBody, headers: { ...headers, origin: EVIL } });
    assert.equal(evil.status, 403);
  });

  test('with authentication any Host may reach the API (a token is required anyway)', async () => {
    const token = await login(server);
    const res = await send(server.at('flows'), { headers: { host: 'runnel.example.com', authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
  });
});
