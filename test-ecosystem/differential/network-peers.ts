/**
 * The outside peers the network cases talk to, started by the test before both systems so they
 * reach them through the environment: an MQTT broker (aedes), a TCP echo server, a WebSocket echo
 * server and a UDP echo that answers on the loopback broadcast address, so that both systems'
 * `udp in` nodes (bound to one port with reuseAddr, as both bind) hear it.
 */
import { once } from 'node:events';
import dgram from 'node:dgram';
import net from 'node:net';
import { Aedes } from 'aedes';
import WebSocket, { WebSocketServer } from 'ws';

/** The path of the cases' websocket-listener, which the peer connects to on each system. */
export const LISTENER_PATH = '/diff-ws-listener';

export interface NetworkPeers {
  env: Record<string, string>;
  /**
   * Waits until the deployed flows reached the peers: Node-RED drops what mqtt out sends before
   * its broker node has connected, so cases start only once every client is in.
   */
  ready(expect: { subscriptions: number; webSockets: number }, ms?: number): Promise<void>;
  /** Connects an echo client to each system's websocket-listener (base: the system's root URL). */
  connectListeners(bases: string[]): Promise<void>;
  stop(): Promise<void>;
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
  wss.on('connection', (ws) => ws.on('message', (d, binary) => ws.send(binary ? d : `echo:${d}`)));
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
      DIFF_UDP_PORT: String(udpPort),
      DIFF_UDP_PEER: String(udp.address().port),
    },
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
      await Promise.all([
        new Promise((r) => mqtt.close(r)),
        new Promise((r) => tcp.close(r)),
        new Promise((r) => wss.close(r)),
        new Promise<void>((r) => udp.close(() => r())),
        new Promise<void>((r) => aedes.close(() => r())),
      ]);
    },
  };
}
