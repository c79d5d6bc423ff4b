/**
 * The ceiling for websocket-echo: a bare `ws` server (the library both systems use) echoing each
 * message on the socket it came from, at the path the scenario's listener has. Replies made in
 * one tick leave in one write (the socket is corked until the next tick), as Runnel's websocket
 * out does: without that the bare server makes a system call per frame and is no ceiling at all.
 * GET / answers 200 so the harness sees it started. Usage: node bare-ws.js PORT
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';

const port = Number(process.argv[2]);
const server = http.createServer((_req, res) => res.end());
const wss = new WebSocketServer({ server, path: '/bench/ws' });
const corked = new Set<Socket>();
const uncorkAll = () => {
  for (const s of corked) s.uncork();
  corked.clear();
};
wss.on('connection', (ws, req) => {
  const socket = req.socket;
  ws.on('message', (data, isBinary) => {
    if (!corked.has(socket)) {
      socket.cork();
      if (corked.size === 0) process.nextTick(uncorkAll);
      corked.add(socket);
    }
    ws.send(data, { binary: isBinary });
  });
});
server.listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
