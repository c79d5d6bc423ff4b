import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import WebSocket from 'ws';
import { startServer, type TestServer } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

/**
 * A flow's `websocket in` listener took 100 MiB messages from anyone who could reach it (ws's
 * default, as in Node-RED), outside the bounds on request bodies.
 */
let server: TestServer;
const wsUrl = () => `${server.url.replace(/^http/, 'ws')}echo`;

before(async () => {
  server = await startServer({
    logging: { level: 'fatal' },
    webSocketNodeMaxPayload: '600kb',
    httpServerLimits: { bodyBufferTotal: '1mb' },
  });
  await deploy(server, [
    { id: 't', type: 'tab' },
    { id: 'L', type: 'websocket-listener', path: '/echo', wholemsg: 'false' },
    { id: 'in', type: 'websocket in', z: 't', server: 'L', client: '', wires: [['out']] },
    { id: 'out', type: 'websocket out', z: 't', server: 'L', client: '', wires: [] },
  ]);
});
after(() => server.dispose());

async function open(): Promise<WebSocket> {
  const ws = new WebSocket(wsUrl());
  await once(ws, 'open');
  return ws;
}

test('a websocket-in message larger than webSocketNodeMaxPayload closes the connection (1009); smaller ones pass', async () => {
  const ws = await open();
  ws.send('x'.repeat(100_000));
  const [echo] = await once(ws, 'message');
  assert.equal(String(echo).length, 100_000);
  ws.send('x'.repeat(700 * 1024));
  const [code] = await once(ws, 'close');
  assert.equal(code, 1009);
});

test('messages being assembled count against httpServerLimits.bodyBufferTotal with request bodies', async () => {
  const first = await open();
  const second = await open();
  // Two unfinished messages of 550 KB: together past the 1 MB budget.
  first.send(Buffer.alloc(550 * 1024), { fin: false });
  // A ping after the fragment: its pong says the server has read (and counted) the fragment.
  first.ping();
  await once(first, 'pong');
  second.send(Buffer.alloc(550 * 1024), { fin: false });
  const [code] = await once(second, 'close');
  assert.equal(code, 1006, 'the connection that passed the budget is closed');
  assert.equal(first.readyState, WebSocket.OPEN);
  first.send(Buffer.alloc(10), { fin: true });
  const [echo] = await once(first, 'message');
  assert.equal((echo as Buffer).length, 550 * 1024 + 10);
  // Its bytes are given back once the message is complete: a new one fits.
  const third = await open();
  third.send(Buffer.alloc(550 * 1024));
  const [again] = await once(third, 'message');
  assert.equal((again as Buffer).length, 550 * 1024);
  first.terminate();
  third.terminate();
});
