import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { WebSocket } from 'ws';
import { CommsServer } from '../../src/server/comms/comms-server.js';
import { createLogger } from '../../src/base/log.js';
import type { AuthService } from '../../src/auth/types.js';
import { adminAuth, eventually, login, request, startServer, READER_PASSWORD, type TestServer } from '../helpers/server.js';
import { send } from './support.js';

/**
 * The editor's websocket as an attacker uses it: sockets that never authenticate held the whole
 * connection cap (and `/health` with it), any valid token received every debug message whatever
 * its scope, one client could subscribe without bound, and requireHttps let the token travel over
 * plain ws://.
 */

interface Opened {
  ws: WebSocket;
  /** The HTTP status when the upgrade was refused, 101 when it opened. */
  status: number;
  frames: unknown[];
  closed: Promise<void>;
}

/** Opens /comms from `from`; resolves once it opened or was refused. */
function openComms(server: TestServer, options: { from?: string; headers?: Record<string, string> } = {}): Promise<Opened> {
  const ws = new WebSocket(server.at('comms').replace(/^http/, 'ws'), { localAddress: options.from ?? '127.0.0.1', headers: options.headers });
  const frames: unknown[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(String(d))));
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  return new Promise((resolve) => {
    ws.once('open', () => resolve({ ws, status: 101, frames, closed }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ ws, status: res.statusCode ?? 0, frames, closed });
      res.resume();
    });
    ws.once('error', () => resolve({ ws, status: 0, frames, closed }));
  });
}

const authAnswer = async (opened: Opened) => {
  await eventually(() => opened.frames.some((f) => (f as { auth?: string }).auth !== undefined));
  return (opened.frames.find((f) => (f as { auth?: string }).auth !== undefined) as { auth: string }).auth;
};

describe('the editor websocket with adminAuth', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ logging: { level: 'fatal' }, adminAuth: adminAuth(), httpServerLimits: { maxConnections: 40 } });
  });
  after(() => server.dispose());

  test('sockets that never authenticate cannot fill the connection cap: /health and an admin still get through', async () => {
    const idle: Opened[] = [];
    // 40 sockets from 8 addresses: without bounds they held every connection the server allows.
    for (let a = 1; a <= 8; a++) for (let i = 0; i < 5; i++) idle.push(await openComms(server, { from: `127.0.0.${a + 10}` }));
    // The newest ten stay (a quarter of maxConnections); each newer one pushed the oldest out.
    await eventually(() => server.instance.app.comms?.size === 10);
    const health = await send(server.at('health'), { timeoutMs: 3000 });
    assert.equal(health.status, 200);
    const token = await login(server);
    const editor = await openComms(server);
    assert.equal(editor.status, 101);
    editor.ws.send(JSON.stringify({ auth: token }));
    assert.equal(await authAnswer(editor), 'ok');
    editor.ws.terminate();
    for (const o of idle) o.ws.terminate();
    await eventually(() => server.instance.app.comms?.size === 0);
  });

  test('one address holds at most ten unauthenticated sockets: the oldest go first', async () => {
    const opened: Opened[] = [];
    for (let i = 0; i < 12; i++) opened.push(await openComms(server, { from: '127.0.0.99' }));
    await Promise.all(opened.slice(0, 2).map((o) => o.closed));
    assert.equal(server.instance.app.comms?.size, 10);
    assert.ok(opened.slice(2).every((o) => o.ws.readyState === WebSocket.OPEN));
    for (const o of opened) o.ws.terminate();
    await eventually(() => server.instance.app.comms?.size === 0);
  });

  test('a token without status.read gets auth:fail, as in Node-RED; a read token is let in', async () => {
    const narrow = await login(server, 'reader', READER_PASSWORD, 'nodes.read');
    const refused = await openComms(server);
    refused.ws.send(JSON.stringify({ auth: narrow }));
    assert.equal(await authAnswer(refused), 'fail');
    await refused.closed;
    const reader = await login(server, 'reader', READER_PASSWORD, 'read');
    const allowed = await openComms(server);
    allowed.ws.send(JSON.stringify({ auth: reader }));
    assert.equal(await authAnswer(allowed), 'ok');
    allowed.ws.terminate();
  });

  test('subscriptions per client are bounded: filters beyond the bound are ignored', async () => {
    const token = await login(server);
    const editor = await openComms(server);
    editor.ws.send(JSON.stringify({ auth: token }));
    assert.equal(await authAnswer(editor), 'ok');
    for (let i = 0; i < 300; i++) editor.ws.send(JSON.stringify({ subscribe: `nothing/${i}` }));
    editor.ws.send(JSON.stringify({ subscribe: 'debug' }));
    const flows = [
      { id: 't', type: 'tab' },
      { id: 'i', type: 'inject', z: 't', once: true, onceDelay: 0.1, payload: 'seen', payloadType: 'str', wires: [['d']] },
      { id: 'd', type: 'debug', z: 't', active: true, complete: 'payload', wires: [] },
    ];
    assert.equal((await request(server.at('flows'), { method: 'POST', json: flows, token })).status, 204);
    const probe = await openComms(server);
    probe.ws.send(JSON.stringify({ auth: token }));
    probe.ws.send(JSON.stringify({ subscribe: 'debug' }));
    await request(server.at('inject/i'), { method: 'POST', token });
    await eventually(() => probe.frames.flat().some((e) => (e as { topic?: string }).topic === 'debug'));
    assert.ok(!editor.frames.flat().some((e) => (e as { topic?: string }).topic === 'debug'), 'the 301st subscription was kept');
    editor.ws.terminate();
    probe.ws.terminate();
  });
});

test('requireHttps refuses a plain ws:// /comms (the token would travel in clear); a TLS proxy may forward it', async () => {
  const server = await startServer({ logging: { level: 'fatal' }, requireHttps: true });
  try {
    const plain = await openComms(server);
    assert.equal(plain.status, 403);
    const proxied = await openComms(server, { headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(proxied.status, 101);
    proxied.ws.terminate();
  } finally {
    await server.dispose();
  }
});

test('an editor socket that does not authenticate in time is closed', async () => {
  const server = http.createServer((_req, res) => res.end());
  const denyAll = { enabled: true, authenticate: async () => null } as unknown as AuthService;
  const log = createLogger('warn', new Writable({ write: (_c, _e, cb) => cb() }));
  const comms = new CommsServer(server, { path: '/comms', auth: denyAll, log, authTimeoutMs: 200 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/comms`);
    await new Promise((resolve) => ws.once('open', resolve));
    const closed = await Promise.race([new Promise((resolve) => ws.once('close', () => resolve(true))), new Promise((resolve) => setTimeout(() => resolve(false), 3000))]);
    assert.ok(closed, 'the socket was still open 3 s after it opened without a token');
    await eventually(() => comms.size === 0);
  } finally {
    comms.close();
    await new Promise((resolve) => server.close(resolve));
  }
});
