import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import net from 'node:net';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import { WebSocketServer, createWebSocketStream } from 'ws';
import { Aedes } from 'aedes';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually, startServer, type TestServer } from '../../helpers/server.js';
import { installCapture, type Capture } from '../../helpers/capture.js';
import { TLS_DIR } from '../../helpers/mqtt.js';
import { getProxyForUrl } from '../../../src/nodes/network/proxy/lookup.js';
import { node, receiver, type Conf } from '../flow.js';
import { deploy } from '../../helpers/deploy.js';

const tab = { id: 't1', type: 'tab', label: 'proxy' };
const cap = (id: string) => node(id, 'test-capture');


const listen = async <T extends net.Server>(server: T): Promise<number> => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
};

/** A forward proxy: absolute-URI requests are relayed, CONNECT opens a tunnel; it records what it saw. */
function startProxy() {
  const seen: { method: string; target: string; auth?: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method!, target: req.url!, auth: req.headers['proxy-authorization'] });
    const target = new URL(req.url!);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = http.request(target, { method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode!, { ...up.headers, via: 'test-proxy' });
      up.pipe(res);
    });
    req.pipe(upstream);
  });
  server.on('connect', (req, socket: net.Socket, head) => {
    seen.push({ method: 'CONNECT', target: req.url!, auth: req.headers['proxy-authorization'] });
    const [host, port] = req.url!.split(':');
    const upstream = net.connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  return { server, seen };
}

/**
 * aedes reads once per 'readable' and counts on `read()` returning everything buffered, as it did
 * up to Node 24. Node 26's `read()` returns one buffered chunk, and a WebSocket stream buffers
 * one chunk per frame: the CONNECT packet mqtt.js writes in several frames stalled aedes after its
 * first byte (a plain TCP socket hands over whole packets). Reads here return all that is buffered.
 */
function wholeReads(stream: Duplex): Duplex {
  const read = stream.read.bind(stream);
  stream.read = (size?: number) => {
    if (typeof size === 'number') return read(size);
    const chunks: Buffer[] = [];
    for (let chunk: Buffer | null; (chunk = read()) !== null;) chunks.push(chunk);
    return chunks.length > 0 ? Buffer.concat(chunks) : null;
  };
  return stream;
}

describe('http request through proxies', () => {
  let server: TestServer;
  let capture: Capture;
  const receive = receiver(() => server);
  const proxy = startProxy();
  let proxyPort = 0;
  let plainPort = 0;
  let securePort = 0;
  const target = http.createServer((req, res) => res.end(`plain ${req.url}`));
  const secure = https.createServer({ key: readFileSync(path.join(TLS_DIR, 'server.key')), cert: readFileSync(path.join(TLS_DIR, 'server.crt')) }, (req, res) => res.end(`secure ${req.url}`));
  const saved = { http_proxy: process.env.http_proxy, https_proxy: process.env.https_proxy, no_proxy: process.env.no_proxy, ws_proxy: process.env.ws_proxy };

  before(async () => {
    proxyPort = await listen(proxy.server);
    plainPort = await listen(target);
    securePort = await listen(secure);
    server = await startServer();
    capture = installCapture(server);
  });
  after(async () => {
    Object.assign(process.env, saved);
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    await server.dispose();
    for (const s of [proxy.server, target, secure]) {
      s.closeAllConnections?.();
      s.close();
    }
  });

  const flows = (extra: Conf[] = [], reqExtra: Conf = {}) => [
    tab,
    { id: 'tls', type: 'tls-config', cert: '', key: '', ca: path.join(TLS_DIR, 'ca.crt'), verifyservercert: true },
    node('req', 'http request', { method: 'GET', ret: 'txt', url: '', tls: 'tls', ...reqExtra }, [['got']]), cap('got'),
    ...extra,
  ];

  test('http_proxy and https_proxy from the environment carry plain requests and CONNECT tunnels; no_proxy bypasses', async () => {
    process.env.http_proxy = `http://127.0.0.1:${proxyPort}`;
    process.env.https_proxy = `http://u%40x:p@127.0.0.1:${proxyPort}`;
    delete process.env.no_proxy;
    await deploy(server, flows());
    receive('req', { url: `http://127.0.0.1:${plainPort}/a` });
    const [plain] = await capture.waitFor('got');
    assert.equal(plain.payload, 'plain /a');
    assert.equal(plain.headers.via, 'test-proxy');
    receive('req', { url: `https://localhost:${securePort}/b` });
    const [, tunnelled] = await capture.waitFor('got', 2);
    assert.equal(tunnelled.payload, 'secure /b', 'the tls-config CA verifies the server at the end of the tunnel');
    assert.deepEqual(proxy.seen.map((s) => [s.method, s.target]), [['GET', `http://127.0.0.1:${plainPort}/a`], ['CONNECT', `localhost:${securePort}`]]);
    assert.equal(proxy.seen[1].auth, `Basic ${Buffer.from('u@x:p').toString('base64')}`);

    process.env.no_proxy = `localhost,127.0.0.1:${plainPort}`;
    receive('req', { url: `http://127.0.0.1:${plainPort}/c` });
    const got = await capture.waitFor('got', 3);
    assert.equal(got[2].payload, 'plain /c');
    assert.equal(got[2].headers.via, undefined, 'no_proxy sends it directly');
    assert.equal(proxy.seen.length, 2);
  });

  test('an http proxy config node replaces the environment, with its own credentials and bypass list', async () => {
    delete process.env.http_proxy;
    delete process.env.https_proxy;
    delete process.env.no_proxy;
    proxy.seen.length = 0;
    capture.messages.clear();
    await deploy(server, flows([{ id: 'px', type: 'http proxy', url: `http://127.0.0.1:${proxyPort}`, noproxy: ['skip.invalid'], credentials: { username: 'pu', password: 'pp' } }], { proxy: 'px' }));
    receive('req', { url: `http://127.0.0.1:${plainPort}/d` });
    const [m] = await capture.waitFor('got');
    assert.equal(m.payload, 'plain /d');
    assert.deepEqual(proxy.seen.map((s) => [s.method, s.auth]), [['GET', `Basic ${Buffer.from('pu:pp').toString('base64')}`]]);
  });

  test("the tls-config's server name goes out as SNI, directly and through a CONNECT tunnel", async () => {
    const names: (string | false | null)[] = [];
    const sni = https.createServer({ key: readFileSync(path.join(TLS_DIR, 'server.key')), cert: readFileSync(path.join(TLS_DIR, 'server.crt')) }, (req, res) => res.end('sni'));
    sni.on('secureConnection', (socket: TLSSocket) => names.push(socket.servername));
    const sniPort = await listen(sni);
    delete process.env.http_proxy;
    delete process.env.https_proxy;
    delete process.env.no_proxy;
    capture.messages.clear();
    try {
      await deploy(server, [
        tab,
        { id: 'named', type: 'tls-config', cert: '', key: '', ca: '', servername: 'sni.example', verifyservercert: false },
        node('req', 'http request', { method: 'GET', ret: 'txt', url: '', tls: 'named' }, [['got']]), cap('got'),
      ]);
      receive('req', { url: `https://127.0.0.1:${sniPort}/direct` });
      await capture.waitFor('got');
      process.env.https_proxy = `http://127.0.0.1:${proxyPort}`;
      receive('req', { url: `https://127.0.0.1:${sniPort}/tunnelled` });
      const got = await capture.waitFor('got', 2);
      assert.deepEqual(got.map((m) => m.payload), ['sni', 'sni']);
      assert.deepEqual(names, ['sni.example', 'sni.example']);
    } finally {
      delete process.env.https_proxy;
      sni.closeAllConnections();
      sni.close();
    }
  });

  test('a websocket-client goes through http_proxy with a CONNECT tunnel', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    wss.on('connection', (ws) => ws.on('message', (d) => ws.send(`echo:${d}`)));
    const wsPort = (wss.address() as net.AddressInfo).port;
    process.env.http_proxy = `http://127.0.0.1:${proxyPort}`;
    delete process.env.no_proxy;
    proxy.seen.length = 0;
    capture.messages.clear();
    await deploy(server, [
      tab,
      { id: 'wc', type: 'websocket-client', path: `ws://127.0.0.1:${wsPort}/x`, tls: '', wholemsg: 'false', hb: '0', subprotocol: '', headers: [] },
      node('wsin', 'websocket in', { server: '', client: 'wc' }, [['got']]), cap('got'),
      node('wsout', 'websocket out', { server: '', client: 'wc' }, []),
    ]);
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; capture.of('got').length === 0 && i < 100; i++) {
      receive('wsout', { payload: 'through' });
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(capture.of('got')[0].payload, 'echo:through');
    assert.deepEqual(proxy.seen.map((s) => [s.method, s.target]), [['CONNECT', `127.0.0.1:${wsPort}`]]);
    await deploy(server, [tab]);
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(r));
  });

  test('an mqtt-broker with a ws:// URL goes through ws_proxy (Node-RED looks the proxy up by the URL\'s scheme) with a CONNECT tunnel', async () => {
    // An MQTT broker over WebSocket: aedes reading each connection's stream.
    const aedes = await Aedes.createBroker();
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    wss.on('connection', (ws) => aedes.handle(wholeReads(createWebSocketStream(ws))));
    let subscribed = false;
    aedes.on('subscribe', (subs) => (subscribed ||= subs.some((x) => x.topic === 'proxied/#')));
    const clients: string[] = [];
    aedes.on('client', (c) => clients.push(c.id));
    const wsPort = (wss.address() as net.AddressInfo).port;
    delete process.env.http_proxy;
    delete process.env.no_proxy;
    process.env.ws_proxy = `http://mq%40tt:secret@127.0.0.1:${proxyPort}`;
    proxy.seen.length = 0;
    capture.messages.clear();
    try {
      await deploy(server, [
        tab,
        { id: 'wb', type: 'mqtt-broker', broker: `ws://127.0.0.1:${wsPort}/mqtt`, port: '', clientid: '', autoConnect: true, usetls: false, protocolVersion: '4', keepalive: '60', cleansession: true, autoUnsubscribe: true },
        node('sub', 'mqtt in', { topic: 'proxied/#', qos: '1', datatype: 'utf8', broker: 'wb', nl: false, rap: true, rh: 0, inputs: 0 }, [['got']]), cap('got'),
        node('pub', 'mqtt out', { topic: 'proxied/a', qos: '1', retain: 'false', broker: 'wb' }, []),
      ]);
      // The subscription is in once the broker has seen it; then a publish comes back through the tunnel.
      await eventually(() => subscribed, 15_000);
      receive('pub', { payload: 'through' });
      const [received] = await capture.waitFor('got', 1, 15_000);
      assert.equal(received.payload, 'through');
      assert.equal(received.topic, 'proxied/a');
      assert.deepEqual(proxy.seen.map((s) => [s.method, s.target]), [['CONNECT', `127.0.0.1:${wsPort}`]]);
      assert.equal(proxy.seen[0].auth, `Basic ${Buffer.from('mq@tt:secret').toString('base64')}`);
      // http_proxy is not what Node-RED's MQTT looks at: without ws_proxy the broker is reached directly.
      process.env.http_proxy = `http://127.0.0.1:${proxyPort}`;
      delete process.env.ws_proxy;
      proxy.seen.length = 0;
      await deploy(server, [tab]);
      await deploy(server, [
        tab,
        { id: 'wb2', type: 'mqtt-broker', broker: `ws://127.0.0.1:${wsPort}/mqtt`, port: '', clientid: 'direct', autoConnect: true, usetls: false, protocolVersion: '4', keepalive: '60', cleansession: true, autoUnsubscribe: true },
        node('sub2', 'mqtt in', { topic: 'direct/#', qos: '0', datatype: 'utf8', broker: 'wb2', nl: false, rap: true, rh: 0, inputs: 0 }, []),
      ]);
      await eventually(() => clients.includes('direct'), 15_000);
      assert.deepEqual(proxy.seen, []);
    } finally {
      await deploy(server, [tab]);
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => wss.close(r));
      await new Promise<void>((r) => aedes.close(() => r()));
    }
  });

  test('the no_proxy rules: exact hosts, suffixes, ports, wildcard, upper case', () => {
    const env = { http_proxy: 'http://p:1', HTTPS_PROXY: 'q:2', no_proxy: '.internal, exact.host, *.wild, other:8080' };
    assert.equal(getProxyForUrl('http://example.com/', { env }), 'http://p:1');
    assert.equal(getProxyForUrl('https://example.com/', { env }), 'https://q:2');
    assert.equal(getProxyForUrl('http://a.internal/', { env }), '');
    assert.equal(getProxyForUrl('http://exact.host/', { env }), '');
    assert.equal(getProxyForUrl('http://sub.exact.host/', { env }), 'http://p:1');
    assert.equal(getProxyForUrl('http://x.wild/', { env }), '');
    assert.equal(getProxyForUrl('http://other:8080/', { env }), '');
    assert.equal(getProxyForUrl('http://other:9090/', { env }), 'http://p:1');
    assert.equal(getProxyForUrl('http://any/', { env: { ...env, no_proxy: '*' } }), '');
    assert.equal(getProxyForUrl('not a url', { env }), '');
  });
});
