/**
 * The physical ceiling for the HTTP scenarios: a bare node:http server answering every request
 * with the body the flows answer, with the headers Node-RED's http response node sends for a
 * string payload. Usage: node bare-server.js PORT BODY
 */
import http from 'node:http';

const [port, body] = [Number(process.argv[2]), process.argv[3] ?? ''];
const length = String(Buffer.byteLength(body));

http
  .createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': length });
    res.end(body);
  })
  .listen(port, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
