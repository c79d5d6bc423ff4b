import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import selfsigned from 'selfsigned';
import { adminAuth, login, READER_PASSWORD, startServer } from '../helpers/server.js';
import { send } from './support.js';

/**
 * The `metrics.port` listener was a bare node:http server: no connection cap and no timeouts
 * (1,000 idle sockets used up the file descriptors), any `Host` answered, plain HTTP when `https`
 * was set, and `metrics.permission` not asked for.
 */

/** Opens a raw connection that sends nothing; resolves once the server closed it (or `ms` passed). */
function idleSocket(port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.on('error', () => undefined);
  });
}

test('the metrics listener closes idle sockets, caps connections and checks Host like the main server', async () => {
  const server = await startServer({
    logging: { level: 'fatal' },
    metrics: { enabled: true, port: 0 },
    httpServerLimits: { headersTimeout: 500, requestTimeout: 1000, maxConnections: 5 },
  });
  try {
    const url = new URL(server.instance.metricsUrl!);
    const port = Number(url.port);
    // Beyond the cap, sockets are closed at once; the others when their headers do not come.
    const closed = await Promise.all(Array.from({ length: 8 }, () => idleSocket(port, 5000)));
    assert.ok(closed.every(Boolean), `${closed.filter((c) => !c).length} idle sockets were still open after 5 s`);
    const rebound = await send(url.href, { headers: { host: 'attacker.example:9464' } });
    assert.deepEqual([rebound.status, rebound.body?.code], [403, 'host_not_allowed']);
    assert.equal((await send(url.href)).status, 200);
  } finally {
    await server.dispose();
  }
});

test('the metrics listener asks for metrics.permission', async () => {
  const server = await startServer({ logging: { level: 'fatal' }, adminAuth: adminAuth(), metrics: { enabled: true, port: 0, permission: 'metrics.read' } });
  try {
    const url = server.instance.metricsUrl!;
    const anonymous = await send(url);
    assert.deepEqual([anonymous.status, anonymous.body?.code], [401, 'unauthorized']);
    const token = await login(server, 'reader', READER_PASSWORD, 'read');
    const scraped = await send(url, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(scraped.status, 200);
    assert.match(scraped.text, /runnel_nodes_running/);
  } finally {
    await server.dispose();
  }
});

test('with https set, the metrics listener speaks TLS too', async () => {
  const pems = (await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  })) as { private: string; cert: string };
  const server = await startServer({ logging: { level: 'fatal' }, https: { key: pems.private, cert: pems.cert }, metrics: { enabled: true, port: 0 } });
  try {
    const url = server.instance.metricsUrl!;
    assert.match(url, /^https:/);
    const status = await new Promise<number>((resolve, reject) => {
      https.get(url, { ca: pems.cert, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });
    assert.equal(status, 200);
    // Plain HTTP on that port gets no metrics.
    await assert.rejects(send(url.replace(/^https/, 'http'), { timeoutMs: 3000 }));
  } finally {
    await server.dispose();
  }
});
