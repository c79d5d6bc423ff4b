import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { READER_PASSWORD, adminAuth, login, request, startServer, type TestServer } from '../helpers/server.js';
import { arrivals, tokenRequest } from './support.js';

/**
 * Anonymous uploads to a flow's route announcing 1 MB each and sending a byte a second (256 of
 * them against the default 256 MB `bodyBufferTotal`) held the whole body budget: the admin's
 * deploys got 503 `server_busy` for as long as the uploads kept coming. The last quarter of the
 * budget is the admin API's: authenticated requests and logins get through.
 */

let server: TestServer;
let admin: string;
const flows = [
  { id: 't', type: 'tab' },
  { id: 'in', type: 'http in', z: 't', url: '/upload', method: 'post', wires: [['out']] },
  { id: 'out', type: 'http response', z: 't', wires: [] },
];

before(async () => {
  server = await startServer({
    logging: { level: 'fatal' },
    adminAuth: adminAuth(),
    httpServerLimits: { bodyBufferTotal: '4mb', bodyTimeout: 60_000, requestTimeout: 60_000 },
  });
  admin = await login(server);
  assert.equal((await request(server.at('flows'), { method: 'POST', json: flows, token: admin })).status, 204);
});
after(() => server.dispose());

/** An upload that announces `length` bytes and sends two: it holds its share of the budget. */
function stalledUpload(length: number): { socket: net.Socket; answer: Promise<string> } {
  const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
  socket.write(`POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n\r\nab`);
  const answer = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
  return { socket, answer };
}

test('uploads that fill the body budget leave the admin able to log in and deploy', async () => {
  const raw = server.instance.app.server;
  // 4 MB less a reserve of a quarter holds three; the fourth is refused (without a reserve, it
  // was held too, and what was left could not take the deploy below).
  const held = arrivals(raw, 'request', 4, '/upload');
  const uploads = [0, 1, 2, 3].map(() => stalledUpload(1_000_000));
  await held;
  try {
    const anonymous = await request(server.at('upload'), { method: 'POST', body: 'x'.repeat(200_000), headers: { 'content-type': 'text/plain' } });
    assert.equal(anonymous.status, 503, 'an anonymous upload took the reserve');
    // Bigger than what the open budget has left.
    const padded = [...flows, { id: 'c', type: 'comment', z: 't', info: 'x'.repeat(200_000) }];
    const deploy = await request(server.at('flows'), { method: 'POST', json: padded, token: admin });
    assert.equal(deploy.status, 204, `the admin's deploy was refused: ${deploy.status} ${JSON.stringify(deploy.body)}`);
    const loggedIn = await tokenRequest(server.at.bind(server), 'reader', READER_PASSWORD, '127.0.0.1', 'read');
    assert.equal(loggedIn.status, 200, `a login was refused: ${loggedIn.status} ${loggedIn.text}`);
    const unauthenticated = await request(server.at('flows'), { method: 'POST', json: padded, token: 'not-a-token' });
    assert.equal(unauthenticated.status, 503, 'a request without a valid token took the reserve');
  } finally {
    for (const u of uploads) u.socket.destroy();
  }
});
