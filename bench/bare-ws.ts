/**
 * The ceiling for websocket-echo: a bare `ws` server (the library both systems use) echoing each
 * message on the socket it came from, at the path the scenario's listener has. GET / answers
 * 200 so the harness sees it started. Usage: node bare-ws.js PORT
 */
import http from 'node:http';
import { WebSocketServer } from 'ws';

const port = Number(process.argv[2]);
const server = http.createServer((_req, res) => res.end());
const wss = new WebSocketServer({ server, path: '/bench/ws' });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});
server.listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
