/**
 * The network palette under load. `mqtt-pipeline`: messages published to one broker (Debian's
 * mosquitto, a separate process) go mqtt in → function → mqtt out and back to the harness.
 * `websocket-echo`: clients keep a window of messages in flight to a websocket-listener whose
 * websocket in is wired to websocket out, which answers each client on its own session.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import mqtt from 'mqtt';
import WebSocket from 'ws';
import { deployBody, flowsHeaders } from '../admin-client.js';
import type { FlowNode } from '../flows.js';
import { cpuSeconds, type RunningSystem } from '../systems.js';
import { adminToken, sleep } from './common.js';
import type { Scenario, ScenarioContext } from './types.js';

const MOSQUITTO = '/usr/sbin/mosquitto';
const MQTT_MESSAGES = 20_000;
/** Publishes in bursts of this many, yielding between them so the harness keeps reading. */
const BURST = 500;
const STALL_MS = 3000;
const WS_CLIENTS = 10;
const WS_WINDOW = 50;
const WS_SECONDS = 5;

/**
 * The system's own CPU time per message (user + system, all its threads; the broker and the
 * harness excluded). On 2 cores the harness, the broker and the system share the machine, so
 * messages/s is capped by the load generator; this says what each message costs the system.
 */
const CPU_PER_MESSAGE = { key: 'cpuPerMessage', label: 'CPU per message (system under test)', unit: 'µs', digits: 1 } as const;

async function deploy(system: RunningSystem, ctx: ScenarioContext, flows: FlowNode[]): Promise<void> {
  const token = await adminToken(system, ctx);
  const res = await fetch(`${system.base}flows`, { method: 'POST', headers: flowsHeaders(token, 'full'), body: deployBody(flows) });
  if (res.status !== 200) throw new Error(`POST /flows answered ${res.status}: ${await res.text()}`);
}

async function startMosquitto(): Promise<{ port: number; stop(): Promise<void> }> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((r) => probe.close(r));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-mosquitto-'));
  const conf = path.join(dir, 'mosquitto.conf');
  await writeFile(conf, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  const child: ChildProcess = spawn(MOSQUITTO, ['-c', conf], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => net.connect(port, '127.0.0.1').on('connect', function (this: net.Socket) {
      this.destroy();
      resolve(true);
    }).on('error', () => resolve(false)));
    if (up) break;
    await sleep(50);
  }
  return {
    port,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Points the bare MQTT.js republisher at this round's broker; resolves once it has subscribed. */
async function connectBare(system: RunningSystem, port: number): Promise<void> {
  const res = await fetch(`${system.base}connect?port=${port}`);
  if (res.status !== 200) throw new Error(`the bare MQTT client could not subscribe: ${await res.text()}`);
}

function pipelineFlow(port: number): FlowNode[] {
  const z = 'bench-mqtt';
  return [
    { id: z, type: 'tab', label: 'mqtt pipeline' },
    { id: 'bench-broker', type: 'mqtt-broker', z, broker: '127.0.0.1', port: String(port), clientid: '', autoConnect: true, usetls: false, protocolVersion: '4', keepalive: '60', cleansession: true, autoUnsubscribe: true, wires: [] },
    { id: 'bench-in', type: 'mqtt in', z, topic: 'bench/in', qos: '0', datatype: 'utf8', broker: 'bench-broker', nl: false, rap: true, rh: 0, inputs: 0, x: 100, y: 40, wires: [['bench-fn']] },
    { id: 'bench-fn', type: 'function', z, func: 'return msg;', outputs: 1, timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [], x: 300, y: 40, wires: [['bench-out']] },
    { id: 'bench-out', type: 'mqtt out', z, topic: 'bench/out', qos: '0', retain: 'false', broker: 'bench-broker', x: 500, y: 40, wires: [] },
  ];
}

export const mqttPipelineScenario: Scenario = {
  name: 'mqtt-pipeline',
  description: `${MQTT_MESSAGES} QoS 0 messages through mqtt in → function → mqtt out via one mosquitto broker; the ceiling is one bare MQTT.js client republishing them`,
  systems: ['runnel', 'node-red', 'bare'],
  bareScript: 'bare-mqtt.js',
  metrics: [
    { key: 'rate', label: 'messages/s', unit: 'msg/s', digits: 0, vsCeiling: true, goals: [{ kind: 'ratio', op: '>=', value: 3 }] },
    { key: 'lost', label: 'messages lost', unit: '', digits: 0 },
    CPU_PER_MESSAGE,
  ],
  async measure(system, ctx) {
    const broker = await startMosquitto();
    const client = mqtt.connect(`mqtt://127.0.0.1:${broker.port}`, { reconnectPeriod: 0 });
    try {
      await new Promise<void>((resolve, reject) => client.once('connect', () => resolve()).once('error', reject));
      let received = 0;
      let last = 0;
      client.on('message', () => {
        received++;
        last = performance.now();
      });
      await client.subscribeAsync('bench/out', { qos: 0 });
      if (system.kind === 'bare') await connectBare(system, broker.port);
      else await deploy(system, ctx, pipelineFlow(broker.port));
      // The flow is ready once a probe makes the round trip.
      for (let i = 0; received === 0; i++) {
        if (i > 600) throw new Error('the mqtt pipeline never answered');
        client.publish('bench/in', 'warm-up');
        await sleep(50);
      }
      await sleep(200);
      received = 0;
      const cpuBefore = await cpuSeconds(system.pid);
      const start = performance.now();
      for (let i = 0; i < MQTT_MESSAGES; i += BURST) {
        for (let j = i; j < Math.min(i + BURST, MQTT_MESSAGES); j++) client.publish('bench/in', String(j));
        await new Promise((r) => setImmediate(r));
      }
      let seen = -1;
      while (received < MQTT_MESSAGES && received !== seen) {
        seen = received;
        await sleep(STALL_MS);
      }
      const cpu = (await cpuSeconds(system.pid)) - cpuBefore;
      if (received < MQTT_MESSAGES) ctx.log(`  warning: ${MQTT_MESSAGES - received} of ${MQTT_MESSAGES} messages lost`);
      return { rate: (received * 1000) / Math.max(last - start, 1), lost: MQTT_MESSAGES - received, cpuPerMessage: (cpu * 1e6) / Math.max(received, 1) };
    } finally {
      client.end(true);
      await broker.stop();
    }
  },
};

function echoFlow(): FlowNode[] {
  const z = 'bench-ws';
  return [
    { id: z, type: 'tab', label: 'websocket echo' },
    { id: 'bench-listener', type: 'websocket-listener', z, path: '/bench/ws', wholemsg: 'false', wires: [] },
    { id: 'bench-ws-in', type: 'websocket in', z, server: 'bench-listener', client: '', x: 100, y: 40, wires: [['bench-ws-out']] },
    { id: 'bench-ws-out', type: 'websocket out', z, server: 'bench-listener', client: '', x: 300, y: 40, wires: [] },
  ];
}

export const websocketEchoScenario: Scenario = {
  name: 'websocket-echo',
  description: `${WS_CLIENTS} clients × ${WS_WINDOW} messages in flight for ${WS_SECONDS} s through websocket in → websocket out; the ceiling is a bare ws echo server`,
  systems: ['runnel', 'node-red', 'bare'],
  bareScript: 'bare-ws.js',
  metrics: [{ key: 'rate', label: 'echoes/s', unit: 'msg/s', digits: 0, vsCeiling: true, goals: [{ kind: 'ratio', op: '>=', value: 3 }] }, CPU_PER_MESSAGE],
  async measure(system, ctx) {
    if (system.kind !== 'bare') await deploy(system, ctx, echoFlow());
    const url = `${system.base.replace(/^http/, 'ws')}bench/ws`;
    let sockets: WebSocket[] = [];
    for (let i = 0; ; i++) {
      try {
        sockets = await Promise.all(Array.from({ length: WS_CLIENTS }, async () => {
          const ws = new WebSocket(url);
          await once(ws, 'open');
          return ws;
        }));
        break;
      } catch (err) {
        for (const s of sockets) s.terminate();
        if (i > 100) throw err;
        await sleep(100);
      }
    }
    let echoes = 0;
    let running = true;
    const cpuBefore = await cpuSeconds(system.pid);
    for (const ws of sockets) {
      ws.on('message', () => {
        echoes++;
        if (running) ws.send('ping');
      });
    }
    const start = performance.now();
    for (const ws of sockets) for (let i = 0; i < WS_WINDOW; i++) ws.send('ping');
    await sleep(WS_SECONDS * 1000);
    running = false;
    const elapsed = performance.now() - start;
    const count = echoes;
    const cpu = (await cpuSeconds(system.pid)) - cpuBefore;
    for (const ws of sockets) ws.terminate();
    return { rate: (count * 1000) / elapsed, cpuPerMessage: (cpu * 1e6) / Math.max(count, 1) };
  },
};
