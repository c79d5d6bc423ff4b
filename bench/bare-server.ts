/**
 * The physical ceiling for the HTTP scenarios: a bare node:http server answering every request
 * with the same bytes from memory. Usage: node bare-server.js PORT BODY_FILE [CONTENT_TYPE]
 * (a file, since a 10,000-node flows document is far beyond what one argument may hold). The
 * default type is the one Node-RED's http response node sends for a string payload.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';

const port = Number(process.argv[2]);
const body = readFileSync(process.argv[3]);
const type = process.argv[4] ?? 'text/html; charset=utf-8';
const length = String(body.length);

http
  .createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': length });
    res.end(body);
  })
  .listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
