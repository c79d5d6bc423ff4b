import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { adminAuth, login, startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';
import { onUpgrade } from '../../src/base/upgrades.js';

/**
 * A flow's `websocket in` listener held every connection it accepted for good, and the connection
 * cap never counted them as idle: anyone could open silent websockets until `maxConnections` was
 * full and the admin API and `/health` were refused. An upgrade request no listener took held its
 * connection for 2 s, and a request body that stalled held its connection for `requestTimeout`.
 */
const listener = (id: string, path: string) => [
  { id, type: 'websocket-listener', path, wholemsg: 'false' },
  { id: `${id}-in`, type: 'websocket in', z: 't', server: id, client: '', wires: [[`${id}-out`]] },
  { id: `${id}-out`, type: 'websocket out', z: 't', server: id, client: '', wires: [] },
];

async function withServer(settings: Record<string, unknown>, paths: string[], fn: (server: TestServer) => Promise<void>) {
  const server = await startServer({ logging: { level: 'fatal' }, ...settings });
  try {
    const token = settings.adminAuth ? await login(server) : undefined;
    await deploy(server, [{ id: 't', type: 'tab' }, ...paths.flatMap((p, i) => listener(`L${i}`, p))], { token });
    await fn(server);
  } finally {
    await server.dispose();
  }
}

/** Opens a websocket; the open socket, or the status its upgrade was refused with. */
function connect(server: TestServer, path: string, options: WebSocket.ClientOptions = {}): Promise<WebSocket | { status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}${path.slice(1)}`, { localAddress: '127.0.0.1', ...options });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

/** One GET on a connection of its own; the status, or the error that ended it. */
function probe(url: string, headers: http.OutgoingHttpHeaders = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, headers, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', (err) => resolve(err.message));
  });
}

const opened = (results: Array<WebSocket | { status: number }>) => results.filter((r): r is WebSocket => r instanceof WebSocket);

test('silent flow websockets beyond webSocketNodeLimits are refused, so /health and the admin get through', { timeout: 30_000 }, async () => {
  await withServer({ adminAuth: adminAuth(), httpServerLimits: { maxConnections: 40 } }, ['/ws'], async (server) => {
    const token = await login(server);
    const results = [];
    for (let i = 0; i < 60; i++) results.push(await connect(server, '/ws'));
    const open = opened(results);
    try {
      assert.equal(open.length, 10, 'a quarter of maxConnections by default');
      const refused = results.find((r) => !(r instanceof WebSocket)) as { status: number; body: string };
      assert.equal(refused.status, 503);
      assert.equal(JSON.parse(refused.body).code, 'websocket_limit');
      for (let i = 0; i < 5; i++) {
        assert.equal(await probe(server.at('health')), 200, `/health, probe ${i}`);
        assert.equal(await probe(server.at('flows'), { authorization: `Bearer ${token}` }), 200, `GET /flows, probe ${i}`);
      }
      open[0].terminate();
      await once(open[0], 'close');
      // The place it held is free again (the server learns of the close a moment later).
      let again = await connect(server, '/ws');
      while (!(again instanceof WebSocket)) again = await connect(server, '/ws');
      open.push(again);
    } finally {
      for (const ws of open) ws.terminate();
    }
  });
});

test('flow websockets are bounded per client address and per listener', { timeout: 30_000 }, async () => {
  await withServer({ webSocketNodeLimits: { perAddress: 2, perListener: 3, maxConnections: 4 } }, ['/a', '/b'], async (server) => {
    const open: WebSocket[] = [];
    try {
      open.push(...opened([await connect(server, '/a'), await connect(server, '/a')]));
      const third = await connect(server, '/a');
      assert.ok(!(third instanceof WebSocket) && third.status === 503 && third.body.includes('perAddress'), 'a third from the same address');
      open.push(...opened([await connect(server, '/a', { localAddress: '127.0.0.2' })]));
      const fourth = await connect(server, '/a', { localAddress: '127.0.0.3' });
      assert.ok(!(fourth instanceof WebSocket) && fourth.body.includes('perListener'), 'a fourth on the listener');
      open.push(...opened([await connect(server, '/b', { localAddress: '127.0.0.3' })]));
      const fifth = await connect(server, '/b', { localAddress: '127.0.0.4' });
      assert.ok(!(fifth instanceof WebSocket) && fifth.body.includes('maxConnections'), 'a fifth in all');
      assert.equal(open.length, 4);
    } finally {
      for (const ws of open) ws.terminate();
    }
  });
});

test('an idle flow websocket is closed after webSocketNodeLimits.idleTimeout; one in use stays', { timeout: 30_000 }, async () => {
  await withServer({ webSocketNodeLimits: { idleTimeout: 1000, pingInterval: 200 } }, ['/ws'], async (server) => {
    const silent = (await connect(server, '/ws')) as WebSocket;
    const busy = (await connect(server, '/ws')) as WebSocket;
    const chatter = setInterval(() => busy.send('hello'), 100);
    try {
      const [code, reason] = await once(silent, 'close');
      assert.deepEqual([code, String(reason)], [1000, 'idle']);
      assert.equal(busy.readyState, WebSocket.OPEN);
    } finally {
      clearInterval(chatter);
      busy.terminate();
    }
  });
});

test('a flow websocket whose peer stops answering pings is terminated', { timeout: 30_000 }, async () => {
  await withServer({ webSocketNodeLimits: { pingInterval: 100 } }, ['/ws'], async (server) => {
    const dead = (await connect(server, '/ws', { autoPong: false })) as WebSocket;
    const [code] = await once(dead, 'close');
    assert.equal(code, 1006, 'terminated, without a closing handshake');
  });
});

test('an upgrade request no websocket listener takes is answered 404 at once', { timeout: 30_000 }, async () => {
  await withServer({}, ['/ws'], async (server) => {
    // The server decides in the turn after the upgrade event, once every listener has run, with no
    // timer to wait for (it waited 2 s): a listener of Runnel's own (so the server still knows that
    // no module listens) looks one turn later, after the server's own look.
    const raw = server.instance.app.server;
    const answered = new Promise<boolean>((resolve) => {
      const look = (_req: http.IncomingMessage, upgrading: Duplex) => {
        raw.off('upgrade', look);
        setImmediate(() => resolve(upgrading.writableEnded));
      };
      onUpgrade(raw, look);
    });
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (c: Buffer) => (text += c));
    const closed = once(socket, 'close');
    socket.write('GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    assert.equal(await answered, true, 'the answer was written in the turn after the upgrade');
    await closed;
    assert.match(text, /^HTTP\/1\.1 404 /);
    assert.match(text, /"code":"not_found"/);
    // A listener's own path still upgrades.
    const ws = (await connect(server, '/ws')) as WebSocket;
    assert.equal(ws.readyState, WebSocket.OPEN);
    ws.terminate();
  });
});

/** Sends `first` bytes of a `length`-byte body and stops; the raw answer, or the error. */
function stalledPost(url: string, length: number, first: number, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; body: string } | string> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent: false, timeout: 10_000, headers: { 'content-type': 'application/json', 'content-length': length, ...headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', (err) => resolve(err.message));
    req.write(' '.repeat(first));
  });
}

test('a request body that stalls is answered 408 after httpServerLimits.bodyTimeout, on admin and flow routes', { timeout: 30_000 }, async () => {
  const settings = { httpServerLimits: { bodyTimeout: 300 } };
  const server = await startServer({ logging: { level: 'fatal' }, ...settings });
  try {
    await deploy(server, [
      { id: 't', type: 'tab' },
      { id: 'in', type: 'http in', z: 't', url: '/upload', method: 'post', wires: [['out']] },
      { id: 'out', type: 'http response', z: 't', wires: [] },
    ]);
    for (const path of ['flows', 'upload']) {
      const answer = await stalledPost(server.at(path), 100, 10);
      assert.equal(typeof answer, 'object', `${path}: ${String(answer)}`);
      const { status, body } = answer as { status: number; body: string };
      assert.deepEqual([status, JSON.parse(body).code], [408, 'request_timeout'], path);
    }
    assert.equal(await probe(server.at('health')), 200);
  } finally {
    await server.dispose();
  }
});

test('a body that keeps arriving more slowly than bodyTimeout in all is not cut', { timeout: 30_000 }, async () => {
  const server = await startServer({ logging: { level: 'fatal' }, httpServerLimits: { bodyTimeout: 500 } });
  try {
    const body = JSON.stringify([{ id: 't', type: 'tab' }]).padEnd(100, ' ');
    const answer = new Promise<number | string>((resolve) => {
      const req = http.request(server.at('flows'), { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (err) => resolve(err.message));
      let sent = 0;
      // 10 bytes every 100 ms: the whole body takes a second, twice bodyTimeout.
      const drip = setInterval(() => {
        req.write(body.slice(sent, sent + 10));
        sent += 10;
        if (sent >= body.length) {
          clearInterval(drip);
          req.end();
        }
      }, 100);
    });
    assert.equal(await answer, 204);
  } finally {
    await server.dispose();
  }
});
