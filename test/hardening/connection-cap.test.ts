import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import selfsigned from 'selfsigned';
import { ADMIN_PASSWORD, adminAuth, login, startServer, type TestServer } from '../helpers/server.js';
import { arrivals } from './support.js';

/**
 * Sockets that connect and send nothing, re-opening as soon as they are closed, once held every
 * connection of `httpServerLimits.maxConnections` (each for `headersTimeout`): `/health` and the
 * admin's authenticated requests were refused for as long as the flood went on.
 */
let server: TestServer;
let token: string;
before(async () => {
  server = await startServer({ logging: { level: 'fatal' }, adminAuth: adminAuth(), httpServerLimits: { maxConnections: 40 } });
  token = await login(server);
});
after(() => server.dispose());

/** `count` silent sockets, each re-opened when the server closes it, until `stop()`. */
function flood(count: number, url = server.url): { stop: () => void } {
  const port = Number(new URL(url).port);
  let stopped = false;
  const sockets = new Set<net.Socket>();
  const open = () => {
    if (stopped) return;
    const socket = net.connect(port, '127.0.0.1');
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      open();
    });
  };
  for (let i = 0; i < count; i++) open();
  return {
    stop: () => {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

/** One GET on a connection of its own; the status, or the error that ended it. */
function probe(path: string, headers: http.OutgoingHttpHeaders = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(server.at(path), { agent: false, headers, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 2 s')));
    req.on('error', (err) => resolve(err.message));
  });
}

test('silent sockets beyond maxConnections never lock out /health or the admin', async () => {
  const raw = server.instance.app.server;
  // The flood fills the cap first: the server has taken (or dropped) each of its sockets.
  const filled = Promise.race([arrivals(raw, 'connection', 60), arrivals(raw, 'drop', 1)]);
  const attack = flood(60);
  try {
    await filled;
    for (let i = 0; i < 5; i++) {
      assert.equal(await probe('health'), 200, `/health, probe ${i}`);
      assert.equal(await probe('flows', { authorization: `Bearer ${token}` }), 200, `GET /flows, probe ${i}`);
    }
  } finally {
    attack.stop();
  }
});

/** Sends half of a POST /flows body at once and the rest when `finish` is called; the status, or the error. */
function slowUpload(url: string, token: string, ca?: string): { finish: () => void; answer: Promise<number | string> } {
  const body = Buffer.from(`[${' '.repeat(64)}]`);
  const options = { method: 'POST', agent: false, ca, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': body.length } };
  let req!: http.ClientRequest;
  const answer = new Promise<number | string>((resolve) => {
    req = (url.startsWith('https:') ? https : http).request(url, options, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err) => resolve(err.message));
  });
  req.write(body.subarray(0, 8));
  return { finish: () => req.end(body.subarray(8)), answer };
}

for (const tls of [false, true]) {
  test(`a request still sending its body is never pushed out by silent sockets${tls ? ', over TLS' : ''}`, async () => {
    const pems = tls ? ((await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, algorithm: 'sha256', extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }] })) as { private: string; cert: string }) : undefined;
    const small = await startServer({ logging: { level: 'fatal' }, adminAuth: adminAuth(), httpServerLimits: { maxConnections: 10 }, ...(pems ? { https: { key: pems.private, cert: pems.cert } } : {}) });
    try {
      const ca = pems?.cert;
      const token = await new Promise<string>((resolve, reject) => {
        const body = new URLSearchParams({ client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD }).toString();
        const req = (tls ? https : http).request(small.at('auth/token'), { method: 'POST', agent: false, ca, headers: { 'content-type': 'application/x-www-form-urlencoded' } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve((JSON.parse(text) as { access_token: string }).access_token));
        });
        req.on('error', reject);
        req.end(body);
      });
      const raw = small.instance.app.server;
      const uploading = arrivals(raw, 'request', 1, '/flows');
      const upload = slowUpload(small.at('flows'), token, ca);
      await uploading;
      // More sockets than the cap holds came: the flood has pushed out every idle socket it could.
      const pushing = arrivals(raw, 'connection', 30);
      const attack = flood(30, small.url);
      await pushing;
      upload.finish();
      const status = await upload.answer;
      attack.stop();
      assert.equal(typeof status, 'number', `the upload was cut: ${status}`);
    } finally {
      await small.dispose();
    }
  });
}
