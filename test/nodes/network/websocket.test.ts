import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { startServer, eventually, type TestServer } from '../../helpers/server.js';
import { installCapture, type Capture } from '../../helpers/capture.js';
import { node, receiver } from '../flow.js';
import { deploy } from '../../helpers/deploy.js';

const tab = { id: 't1', type: 'tab', label: 'ws' };
const cap = (id: string) => node(id, 'test-capture');


/** Opens a client and collects what it receives as text. */
async function open(url: string, protocols?: string[]): Promise<{ ws: WebSocket; got: string[] }> {
  const ws = new WebSocket(url, protocols);
  const got: string[] = [];
  ws.on('message', (d) => got.push(d.toString()));
  await once(ws, 'open');
  return { ws, got };
}

describe('websocket-listener on an http path', () => {
  let server: TestServer;
  let capture: Capture;
  const receive = receiver(() => server);
  const wsUrl = (p: string) => server.url.replace(/^http/, 'ws').replace(/\/$/, '') + p;

  before(async () => {
    server = await startServer({ httpNodeRoot: '/api' });
    capture = installCapture(server);
    await deploy(server, [
      tab,
      { id: 'L', type: 'websocket-listener', path: '/ws/echo', wholemsg: 'false' },
      { id: 'LW', type: 'websocket-listener', path: 'ws/whole', wholemsg: 'true' },
      { id: 'Ldup', type: 'websocket-listener', path: '/ws/echo', wholemsg: 'false' },
      node('in', 'websocket in', { server: 'L', client: '' }, [['upper', 'seen']]),
      node('upper', 'function', { func: 'msg.payload = typeof msg.payload === "string" ? msg.payload.toUpperCase() : msg.payload; return msg;', outputs: 1 }, [['out']]),
      node('out', 'websocket out', { server: 'L', client: '' }, []),
      cap('seen'),
      node('win', 'websocket in', { server: 'LW', client: '' }, [['wfn']]),
      node('wfn', 'function', { func: 'msg.echo = msg.payload; msg.payload = "whole"; return msg;', outputs: 1 }, [['wout', 'wseen']]),
      node('wout', 'websocket out', { server: 'LW', client: '' }, []), cap('wseen'),
      node('st', 'status', { scope: ['in'] }, [['statuses']]), cap('statuses'),
    ]);
  });
  after(() => server.dispose());

  test('each of many clients gets the reply to its own message through msg._session', async () => {
    const clients = await Promise.all(Array.from({ length: 20 }, () => open(wsUrl('/api/ws/echo'))));
    clients.forEach((c, i) => c.ws.send(`hello ${i}`));
    await eventually(() => clients.every((c) => c.got.length === 1));
    clients.forEach((c, i) => assert.deepEqual(c.got, [`HELLO ${i}`]));
    const seen = capture.of('seen');
    assert.equal(seen.length, 20);
    assert.equal(new Set(seen.map((m) => m._session.id)).size, 20);
    assert.equal(seen[0]._session.type, 'websocket');
    assert.equal(typeof seen[0].payload, 'string', 'text frames arrive as strings');
    await eventually(() => capture.of('statuses').some((m) => m.status.text === 'connected 20'));

    receive('out', { payload: 'to everyone' });
    await eventually(() => clients.every((c) => c.got.length === 2));
    assert.ok(clients.every((c) => c.got[1] === 'to everyone'));

    clients[0].ws.send(Buffer.from([0, 1, 2]), { binary: true });
    await eventually(() => capture.of('seen').length === 21);
    assert.ok(Buffer.isBuffer(capture.of('seen')[20].payload), 'binary frames arrive as buffers');
    for (const c of clients) c.ws.close();
    await eventually(() => capture.of('statuses').some((m) => m.status.text === 'common.status.disconnected' && m.status.event === 'disconnect'));
  });

  test('whole-message mode parses JSON into the message and sends the whole message back', async () => {
    const c = await open(wsUrl('/api/ws/whole'));
    c.ws.send(JSON.stringify({ payload: 'p', topic: 't' }));
    c.ws.send('not json');
    await eventually(() => c.got.length === 2);
    const [first, second] = capture.of('wseen');
    assert.equal(first.topic, 't');
    assert.equal(first.echo, 'p');
    assert.equal(second.echo, 'not json');
    const back = JSON.parse(c.got[0]);
    assert.equal(back.payload, 'whole');
    assert.equal(back.topic, 't');
    assert.equal(back._session, undefined, 'the session is not sent to the peer');
    c.ws.close();
  });

  test('a second listener on the same path is refused', async () => {
    assert.ok(server.logs.some((l) => l.includes('Cannot have two WebSocket listeners on the same path: /ws/echo')));
  });

  test('a redeploy ends the open connections and the new listener serves', async () => {
    const c = await open(wsUrl('/api/ws/echo'));
    const closed = once(c.ws, 'close');
    await deploy(server, [tab, { id: 'L', type: 'websocket-listener', path: '/ws/echo', wholemsg: 'false' }, node('in', 'websocket in', { server: 'L' }, [['out']]), node('out', 'websocket out', { server: 'L' }, [])]);
    await closed;
    const d = await open(wsUrl('/api/ws/echo'));
    d.ws.send('again');
    await eventually(() => d.got.length === 1);
    assert.deepEqual(d.got, ['again']);
    d.ws.close();
  });
});

describe('websocket-client', () => {
  let server: TestServer;
  let capture: Capture;
  let wss: WebSocketServer;
  let port = 0;
  const receive = receiver(() => server);
  const peers: WebSocket[] = [];
  const protocols: (string | undefined)[] = [];
  const headers: (string | undefined)[] = [];
  let pings = 0;
  const fromRunnel: string[] = [];

  const listen = async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port, handleProtocols: (set) => (set.has('chat') ? 'chat' : false) });
    await once(wss, 'listening');
    port = (wss.address() as AddressInfo).port;
    wss.on('connection', (ws, req) => {
      peers.push(ws);
      protocols.push(ws.protocol);
      headers.push(req.headers['x-token'] as string | undefined);
      ws.on('ping', () => pings++);
      ws.on('message', (d) => fromRunnel.push(d.toString()));
      ws.send('welcome');
    });
  };

  before(async () => {
    await listen();
    server = await startServer();
    capture = installCapture(server);
    await deploy(server, [
      tab,
      { id: 'C', type: 'websocket-client', path: `ws://127.0.0.1:${port}/feed`, tls: '', wholemsg: 'false', hb: '1', subprotocol: 'chat', headers: [{ keyType: 'other', keyValue: 'x-token', valueType: 'other', valueValue: 'abc' }] },
      node('cin', 'websocket in', { server: '', client: 'C' }, [['cgot']]), cap('cgot'),
      node('cout', 'websocket out', { server: '', client: 'C' }, []),
    ]);
  });
  after(async () => {
    await server.dispose();
    for (const p of peers) p.terminate();
    await new Promise((r) => wss.close(r));
  });

  test('connects with the subprotocol and headers, receives, sends, and pings as heartbeat', async () => {
    await capture.waitFor('cgot');
    assert.equal(capture.of('cgot')[0].payload, 'welcome');
    assert.equal(capture.of('cgot')[0]._session.type, 'websocket');
    assert.equal(protocols[0], 'chat');
    assert.equal(headers[0], 'abc');
    receive('cout', { payload: { a: 1 } });
    await eventually(() => fromRunnel.length === 1);
    assert.deepEqual(fromRunnel, ['{"a":1}']);
    await eventually(() => pings > 0, 3000);
  });

  test('reconnects after the server goes away and comes back', async () => {
    for (const p of peers) p.terminate();
    await new Promise((r) => wss.close(r));
    await listen();
    await capture.waitFor('cgot', 2, 8000);
    assert.equal(capture.of('cgot')[1].payload, 'welcome');
    receive('cout', { payload: 'after reconnect' });
    await eventually(() => fromRunnel.includes('after reconnect'));
  });
});

describe('websocket-client connects only when needed', () => {
  let server: TestServer;
  let wss: WebSocketServer;
  const connections: string[] = [];

  before(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    wss.on('connection', (_ws, req) => connections.push(String(req.url)));
    const url = (p: string) => `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/${p}`;
    const client = (id: string) => ({ id, type: 'websocket-client', path: url(id), tls: '', wholemsg: 'false', hb: '0', subprotocol: '', headers: [] });
    server = await startServer();
    await deploy(server, [
      tab,
      client('unused'), client('out-only'), client('out-then-in'), client('last'),
      node('o1', 'websocket out', { server: '', client: 'out-only' }, []),
      node('o2', 'websocket out', { server: '', client: 'out-then-in' }, []),
      node('i2', 'websocket in', { server: '', client: 'out-then-in' }, [[]]),
      node('i3', 'websocket in', { server: '', client: 'last' }, [[]]),
    ]);
  });
  after(async () => {
    await server.dispose();
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(r));
  });

  test('a client no node uses never connects; one used by an out and an in node connects once', async () => {
    // The nodes are built in order, so once the last client is in, the others have had their turn.
    await eventually(() => connections.includes('/last'));
    await eventually(() => connections.includes('/out-only') && connections.includes('/out-then-in'));
    assert.deepEqual(connections.slice().sort(), ['/last', '/out-only', '/out-then-in']);
  });
});
