import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { request, startServer, type TestServer } from '../helpers/server.js';

/**
 * Body limits: every body was buffered up to apiMaxLength even on paths no route takes;
 * 1,500 stalled uploads grew the process from 269 MB to 7.3 GB; slow-header and slow-body clients
 * held sockets for 80–320 s and 1,100 of them exhausted file descriptors.
 */
let server: TestServer;
before(async () => {
  server = await startServer({
    logging: { level: 'fatal' },
    httpServerLimits: { bodyBufferTotal: '1mb', headersTimeout: 500, requestTimeout: 1500, maxConnections: 20 },
  });
  const flows = [
    { id: 't', type: 'tab' },
    { id: 'in', type: 'http in', z: 't', url: '/upload', method: 'post', wires: [['out']] },
    { id: 'out', type: 'http response', z: 't', wires: [] },
  ];
  assert.equal((await request(server.at('flows'), { method: 'POST', json: flows })).status, 204);
});
after(() => server.dispose());

/** Opens a raw connection, writes `head`, and resolves with what the server sends until it closes (or `ms` passes). */
function raw(head: string, ms = 10_000): { socket: net.Socket; answer: Promise<{ text: string; closed: boolean }> } {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.write(head);
  const answer = new Promise<{ text: string; closed: boolean }>((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve({ text, closed: false }), ms);
    socket.on('data', (d) => (text += d));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.on('error', () => undefined);
  });
  return { socket, answer };
}

test('a body for a path no route takes is refused before it is sent', async () => {
  const { socket, answer } = raw('POST /nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 600000\r\n\r\n');
  const { text } = await answer;
  socket.destroy();
  assert.match(text, /^HTTP\/1\.1 404/);
});

test('bodies in flight beyond httpServerLimits.bodyBufferTotal get 503 before they are read', async () => {
  const first = raw('POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 700000\r\n\r\n');
  await new Promise((r) => setTimeout(r, 100));
  const second = raw('POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 700000\r\n\r\n');
  const refused = await second.answer;
  second.socket.destroy();
  assert.match(refused.text, /^HTTP\/1\.1 503/);
  assert.match(refused.text, /server_busy/);
  first.socket.destroy();
  await first.answer;
  const ok = await request(server.at('upload'), { method: 'POST', body: 'x'.repeat(1000), headers: { 'content-type': 'text/plain' } });
  assert.equal(ok.status, 200);
});

test('a client that never finishes its headers is disconnected', async () => {
  const { socket, answer } = raw('GET /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  const { closed, text } = await answer;
  socket.destroy();
  assert.ok(closed, 'the server kept the slow-header socket open');
  assert.match(text, /^$|^HTTP\/1\.1 408/);
});

test('a client that never finishes its body is disconnected', async () => {
  const { socket, answer } = raw('POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nabc');
  const { closed } = await answer;
  socket.destroy();
  assert.ok(closed, 'the server kept the slow-body socket open');
});

test('connections beyond httpServerLimits.maxConnections are closed', async () => {
  const sockets = Array.from({ length: 30 }, () => raw('', 3000));
  const results = await Promise.all(sockets.map((s) => s.answer));
  for (const s of sockets) s.socket.destroy();
  assert.ok(results.filter((r) => r.closed).length >= 10, `${results.filter((r) => r.closed).length} closed`);
});
