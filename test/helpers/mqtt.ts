import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { once } from 'node:events';
import { Aedes } from 'aedes';
import mqtt, { type MqttClient, type IClientOptions } from 'mqtt';
import { ROOT } from './process.js';
import { tempDir } from './server.js';
import { withFreePort } from './ports.js';

export const TLS_DIR = path.join(ROOT, 'test', 'fixtures', 'tls');

export interface TestBroker {
  port: number;
  aedes: Aedes;
  /** Drops every connection and stops listening, as a broker crash would; the port stays known. */
  stop(): Promise<void>;
  /** Listens again on the same port with a fresh broker (no sessions, no retained messages). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface BrokerOptions {
  /** Serve MQTT over TLS with the test certificate. */
  tls?: boolean;
  /** Accept only this user and password. */
  auth?: { username: string; password: string };
}

/** An in-process aedes broker (MQTT 3.1/3.1.1) on 127.0.0.1, on an ephemeral port unless restarted. */
export async function startAedes(options: BrokerOptions = {}): Promise<TestBroker> {
  let aedes: Aedes;
  let server: net.Server;
  const sockets = new Set<net.Socket>();
  let port = 0;
  const listen = async () => {
    aedes = await Aedes.createBroker();
    if (options.auth) {
      const { username, password } = options.auth;
      aedes.authenticate = (_client, user, pass, cb) => cb(null, user === username && String(pass) === password);
    }
    const handle = (socket: net.Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      aedes.handle(socket);
    };
    server = options.tls
      ? tls.createServer({ key: readFileSync(path.join(TLS_DIR, 'server.key')), cert: readFileSync(path.join(TLS_DIR, 'server.crt')) }, handle)
      : net.createServer(handle);
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as net.AddressInfo).port;
  };
  const stop = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    get aedes() {
      return aedes;
    },
    stop,
    restart: listen,
    close: stop,
  };
}

const MOSQUITTO = '/usr/sbin/mosquitto';
/** Debian's mosquitto speaks MQTT 5, which aedes does not; .ci/run installs it. */
export const hasMosquitto = existsSync(MOSQUITTO);

export interface Mosquitto {
  port: number;
  close(): Promise<void>;
}

/**
 * A mosquitto process listening on 127.0.0.1 only, anonymous access, no persistence. Mosquitto must
 * be told its port: one taken since the probe makes it exit "Address already in use", and it
 * starts again on another (withFreePort).
 */
export async function startMosquitto(): Promise<Mosquitto> {
  const dir = await tempDir('runnel-mosquitto-');
  return withFreePort(async (port) => {
    const conf = path.join(dir, 'mosquitto.conf');
    await writeFile(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n`);
    const child: ChildProcess = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (d) => (log += d));
    const exited = once(child, 'exit');
    // Generous: a loaded machine starts a process slowly.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
      if (ok) break;
      if (child.exitCode !== null || Date.now() > deadline) {
        if (child.exitCode === null) child.kill('SIGKILL');
        await exited;
        throw new Error(`mosquitto did not start: ${log}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return {
      port,
      close: async () => {
        if (child.exitCode === null) {
          child.kill('SIGTERM');
          await exited;
        }
      },
    };
  });
}

/**
 * A check (for `eventually`) that the aedes broker has registered subscriptions to (or
 * unsubscriptions from) all `topics`. The mqtt in node's actions complete before the broker hears
 * of them, as in Node-RED: a test publishes only after this, or a loaded machine loses the message.
 * Call it before the action.
 */
export function brokerHeard(aedes: Aedes, event: 'subscribe' | 'unsubscribe', topics: string[]): () => boolean {
  const left = new Set(topics);
  const emitter = aedes as unknown as { on(e: string, f: (subs: Array<string | { topic: string }>) => void): void; off(e: string, f: unknown): void };
  const heard = (subs: Array<string | { topic: string }>) => {
    for (const s of subs) left.delete(typeof s === 'string' ? s : s.topic);
    if (left.size === 0) emitter.off(event, heard);
  };
  emitter.on(event, heard);
  return () => left.size === 0;
}

const peers = new Set<MqttClient>();

/** Ends every peer still open: a test that failed before its own `endAsync` must not hold the file open. */
export async function closePeers(): Promise<void> {
  await Promise.all([...peers].map((c) => c.endAsync(true)));
  peers.clear();
}

/** A connected MQTT.js client as an outside peer of the flows under test (ended by `closePeers`). */
export async function peer(port: number, options: IClientOptions = {}): Promise<MqttClient> {
  const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 100, ...options });
  peers.add(client);
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
  });
  return client;
}

/** Collects what a peer receives, by topic. */
export function collect(client: MqttClient): { all: { topic: string; payload: string; packet: any }[]; on(topic: string): string[] } {
  const all: { topic: string; payload: string; packet: any }[] = [];
  client.on('message', (topic, payload, packet) => all.push({ topic, payload: payload.toString(), packet }));
  return { all, on: (topic) => all.filter((m) => m.topic === topic).map((m) => m.payload) };
}
