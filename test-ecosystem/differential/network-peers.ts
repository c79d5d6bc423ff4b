/**
 * The outside peers the network cases talk to, started by the test before both systems so they
 * reach them through the environment: an MQTT broker (aedes), a TCP echo server, a WebSocket echo
 * server, a UDP echo that answers on the loopback broadcast address, so that both systems'
 * `udp in` nodes (bound to one port with reuseAddr, as both bind) hear it, and an HTTPS server that
 * answers with the TLS handshake it saw (SNI, client certificate), using test/fixtures/tls.
 */
import { once } from 'node:events';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { Aedes } from 'aedes';
import WebSocket, { WebSocketServer } from 'ws';

/** The path of the cases' websocket-listener, which the peer connects to on each system. */
export const LISTENER_PATH = '/diff-ws-listener';

/** Where a websocket-client that no websocket in/out uses points, and one only a websocket out uses. */
export const UNUSED_WS_PATH = '/echo-unused';
export const OUT_ONLY_WS_PATH = '/echo-out-only';

export interface NetworkPeers {
  env: Record<string, string>;
  /**
   * Waits until the deployed flows reached the peers: Node-RED drops what mqtt out sends before
   * its broker node has connected, so cases start only once every client is in.
   */
  ready(expect: { subscriptions: number; webSockets: number }, ms?: number): Promise<void>;
  /** Connects an echo client to each system's websocket-listener (base: the system's root URL). */
  connectListeners(bases: string[]): Promise<void>;
  /** The request paths of the WebSocket connections the echo server has had, in order. */
  webSocketPaths(): string[];
  stop(): Promise<void>;
}

/** dist/test-ecosystem/differential → the repository's test-only TLS material. */
const TLS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'tls');

/** Answers every request with the handshake: the SNI name asked for, the client certificate's CN, whether it verified against ca.crt. */
async function startHttps(): Promise<https.Server> {
  const read = (name: string) => readFileSync(path.join(TLS_DIR, name));
  const server = https.createServer({ key: read('server.key'), cert: read('server.crt'), ca: read('ca.crt'), requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const sni = (socket as TLSSocket & { servername?: string | false }).servername || null;
    const client = socket.getPeerCertificate().subject?.CN ?? null;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ sni, client, authorized: socket.authorized }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

const listenTcp = async (server: net.Server): Promise<number> => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
};

async function freeUdpPort(): Promise<number> {
  const probe = dgram.createSocket('udp4');
  probe.bind(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  return port;
}

export async function startNetworkPeers(): Promise<NetworkPeers> {
  const aedes = await Aedes.createBroker();
  let subscriptions = 0;
  aedes.on('subscribe', (subs) => (subscriptions += subs.length));
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const mqtt = net.createServer((s) => {
    track(s);
    aedes.handle(s);
  });
  const tcp = net.createServer((s) => {
    track(s);
    s.on('error', () => {});
    s.on('data', (d) => s.write(`echo:${d}\n`));
  });
  const [mqttPort, tcpPort] = [await listenTcp(mqtt), await listenTcp(tcp)];
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const wsPaths: string[] = [];
  wss.on('connection', (ws, req) => {
    wsPaths.push(req.url ?? '');
    ws.on('message', (d, binary) => ws.send(binary ? d : `echo:${d}`));
  });
  const httpsServer = await startHttps();
  const pem = (name: string) => readFileSync(path.join(TLS_DIR, name), 'utf8');
  const udpPort = await freeUdpPort();
  const udp = dgram.createSocket('udp4');
  udp.bind(0, '127.0.0.1');
  await once(udp, 'listening');
  udp.setBroadcast(true);
  udp.on('message', (m) => udp.send(`echo:${m}`, udpPort, '127.255.255.255'));
  const listenerClients: WebSocket[] = [];
  return {
    env: {
      DIFF_MQTT_PORT: String(mqttPort),
      DIFF_TCP_PORT: String(tcpPort),
      DIFF_WS_URL: `ws://127.0.0.1:${(wss.address() as net.AddressInfo).port}/echo`,
      DIFF_WS_URL_UNUSED: `ws://127.0.0.1:${(wss.address() as net.AddressInfo).port}${UNUSED_WS_PATH}`,
      DIFF_WS_URL_OUT_ONLY: `ws://127.0.0.1:${(wss.address() as net.AddressInfo).port}${OUT_ONLY_WS_PATH}`,
      DIFF_UDP_PORT: String(udpPort),
      DIFF_UDP_PEER: String(udp.address().port),
      DIFF_HTTPS_URL: `https://127.0.0.1:${(httpsServer.address() as net.AddressInfo).port}/handshake`,
      DIFF_TLS_P12: path.join(TLS_DIR, 'server.p12'),
      DIFF_TLS_CERT: pem('server.crt'),
      DIFF_TLS_KEY: pem('server.key'),
      DIFF_TLS_CA: pem('ca.crt'),
    },
    webSocketPaths: () => [...wsPaths],
    async ready(expect, ms = 30_000) {
      const end = Date.now() + ms;
      while (subscriptions < expect.subscriptions || wss.clients.size < expect.webSockets) {
        if (Date.now() > end) throw new Error(`network peers: ${subscriptions} of ${expect.subscriptions} MQTT subscriptions, ${wss.clients.size} of ${expect.webSockets} WebSocket clients`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async connectListeners(bases) {
      await Promise.all(bases.map(async (base) => {
        const ws = new WebSocket(new URL(LISTENER_PATH.slice(1), base.replace(/^http/, 'ws')));
        listenerClients.push(ws);
        ws.on('message', (d, binary) => ws.send(binary ? d : `echo:${d}`));
        await once(ws, 'open');
      }));
    },
    async stop() {
      for (const c of listenerClients) c.terminate();
      for (const s of sockets) s.destroy();
      for (const c of wss.clients) c.terminate();
      httpsServer.closeAllConnections();
      await Promise.all([
        new Promise((r) => mqtt.close(r)),
        new Promise((r) => tcp.close(r)),
        new Promise((r) => wss.close(r)),
        new Promise((r) => httpsServer.close(r)),
        new Promise<void>((r) => udp.close(() => r())),
        new Promise<void>((r) => aedes.close(() => r())),
      ]);
    },
  };
}
