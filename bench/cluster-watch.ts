/**
 * The cluster section's cross-instance debug latency: a debug node on instance 1 (fed by http-in
 * requests, each message stamped with the time it reached the debug node) and an editor's /comms
 * socket on instance 0, at 1 and 100 messages a second. The latency is from the debug node to the
 * editor (the instances share the machine's clock), so it includes the editor socket's 50 ms
 * batching, as an editor sees it. The debug node passes at most 100 a second, so at 100 a second
 * some arrive after the window that held them back.
 * Also the receiving instance's CPU per relayed message (its editor's share included).
 *
 * The same for a socket.io app's broadcast (test/fixtures/cluster's sio-app, which the instances
 * load through nodesDir, as Dashboard 2.0 sends its widget updates): emitted on instance 1, received
 * by a socket.io client (websocket) of instance 0.
 */
import path from 'node:path';
import { io as connect } from 'socket.io-client';
import { Editor } from '../test/helpers/comms.js';
import { ROOT } from '../test/helpers/process.js';
import { percentile } from './stats.js';
import { cpuSeconds } from './systems.js';

const flows = [
  { id: 'w', type: 'tab', label: 'watch' },
  { id: 'win', type: 'http in', z: 'w', url: '/watch', method: 'get', x: 1, y: 1, wires: [['wfn']] },
  { id: 'wfn', type: 'function', z: 'w', outputs: 1, x: 1, y: 1, wires: [['wdbg', 'wout']], func: 'msg.payload = Date.now(); return msg;' },
  { id: 'wdbg', type: 'debug', z: 'w', active: true, tosidebar: true, complete: 'payload', targetType: 'msg', x: 1, y: 1, wires: [] },
  { id: 'wout', type: 'http response', z: 'w', x: 1, y: 1, wires: [] },
];

/** The nodesDir that gives the instances the socket.io app of `socketIoLatency`. */
export const SOCKET_IO_APP = path.join(ROOT, 'test', 'fixtures', 'cluster');

const sioFlows = [
  { id: 's', type: 'tab', label: 'socket.io' },
  { id: 'sin', type: 'http in', z: 's', url: '/sio-watch', method: 'get', x: 1, y: 1, wires: [['sfn']] },
  { id: 'sfn', type: 'function', z: 's', outputs: 1, x: 1, y: 1, wires: [['sio', 'sout']], func: 'msg.payload = Date.now(); return msg;' },
  { id: 'sio', type: 'sio-app', z: 's', x: 1, y: 1, wires: [[]] },
  { id: 'sout', type: 'http response', z: 's', x: 1, y: 1, wires: [] },
];

/** Sends `rate` requests a second to `url` for `seconds`; resolves when all are answered. */
async function drive(url: string, rate: number, seconds: number): Promise<void> {
  const start = Date.now();
  const requests: Promise<unknown>[] = [];
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    requests.push(fetch(url).then((r) => r.arrayBuffer(), () => undefined));
  }
  await Promise.all(requests);
  await new Promise((r) => setTimeout(r, 1000));
}

export async function socketIoLatency(urls: string[], pid: number, seconds: number, say: (line: string) => void): Promise<void> {
  const res = await fetch(`${urls[0]}flows`, { method: 'POST', headers: { 'content-type': 'application/json', 'Runtime-API-Version': 'v2' }, body: JSON.stringify({ flows: sioFlows }) });
  if (res.status !== 200) throw new Error(`deploy failed: ${res.status}`);
  const deadline = Date.now() + 30_000;
  while ((await fetch(`${urls[1]}sio-watch`).then((r) => r.status, () => 0)) !== 200) {
    if (Date.now() > deadline) throw new Error('the socket.io flow did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const client = connect(urls[0]!, { path: '/sio/socket.io', transports: ['websocket'] });
  await new Promise((resolve) => client.once('hello', resolve));
  const latencies: number[] = [];
  let since = Infinity;
  client.on('update', (sent: number) => {
    if (sent >= since) latencies.push(Date.now() - sent);
  });
  say('');
  say(`| socket.io broadcasts a second, node1 → client on node0 (${seconds} s) | received | p50 | p99 | receiving instance's CPU per message |`);
  say('|---|---|---|---|---|');
  for (const rate of [1, 100]) {
    latencies.length = 0;
    const before = await cpuSeconds(pid);
    since = Date.now();
    await drive(`${urls[1]}sio-watch`, rate, seconds);
    const cpu = (await cpuSeconds(pid)) - before;
    const perMessage = latencies.length ? `${Math.round((cpu / latencies.length) * 1e6)} µs` : '—';
    say(`| ${rate} | ${latencies.length}/${rate * seconds} | ${percentile(latencies, 50)} ms | ${percentile(latencies, 99)} ms | ${perMessage} |`);
  }
  client.close();
}

export async function debugLatency(urls: string[], pid: number, seconds: number, say: (line: string) => void): Promise<void> {
  const res = await fetch(`${urls[0]}flows`, { method: 'POST', headers: { 'content-type': 'application/json', 'Runtime-API-Version': 'v2' }, body: JSON.stringify({ flows }) });
  if (res.status !== 200) throw new Error(`deploy failed: ${res.status}`);
  const deadline = Date.now() + 30_000;
  while ((await fetch(`${urls[1]}watch`).then((r) => r.status, () => 0)) !== 200) {
    if (Date.now() > deadline) throw new Error('the watch flow did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  const editor = new Editor(urls[0]!);
  const latencies: number[] = [];
  /** Messages stamped before the current rate began (the warm-up's) are not counted. */
  let since = Infinity;
  editor.ws.on('message', (data) => {
    const now = Date.now();
    const frame = JSON.parse(String(data)) as unknown;
    if (!Array.isArray(frame)) return;
    for (const e of frame as { topic: string; data: { msg?: unknown } }[]) {
      const sent = Number(e.data?.msg);
      if (e.topic === 'debug' && sent >= since) latencies.push(now - sent);
    }
  });
  await editor.send({ subscribe: 'debug' });
  say('');
  say(`| debug messages a second, node1 → editor on node0 (${seconds} s) | received | p50 | p99 | receiving instance's CPU per message |`);
  say('|---|---|---|---|---|');
  for (const rate of [1, 100]) {
    latencies.length = 0;
    const before = await cpuSeconds(pid);
    const total = rate * seconds;
    const start = Date.now();
    since = start;
    const requests: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      requests.push(fetch(`${urls[1]}watch`).then((r) => r.arrayBuffer(), () => undefined));
    }
    await Promise.all(requests);
    await new Promise((r) => setTimeout(r, 1000));
    const cpu = (await cpuSeconds(pid)) - before;
    const perMessage = latencies.length ? `${Math.round((cpu / latencies.length) * 1e6)} µs` : '—';
    say(`| ${rate} | ${latencies.length}/${total} | ${percentile(latencies, 50)} ms | ${percentile(latencies, 99)} ms | ${perMessage} |`);
  }
  editor.close();
}
