import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { io as connect, type Socket } from 'socket.io-client';
import { startAddressedCluster, type ClusterInstance, type TestCluster } from '../helpers/cluster.js';
import { startHaproxy, type TestBalancer } from '../helpers/haproxy.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { killRunnels } from '../helpers/process.js';
import { eventually, login, request } from '../helpers/server.js';

/**
 * A socket.io app that a node module attaches to RED.server (as Dashboard 2.0 and uibuilder do),
 * on three instances behind HAProxy, round-robin without sticky sessions: Runnel's adapter over the
 * cluster relay carries its broadcasts to the clients of every instance, and the requests of a
 * session that land on another instance than the one holding it are passed on to that one (each
 * instance has its instanceUrl, so the ports are chosen first). Clients of every kind: websocket
 * only, HTTP long-polling then upgraded (socket.io's default), and long-polling only.
 */

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/cluster');

const flows = [
  { id: 'app', type: 'tab', label: 'App' },
  { id: 'say', type: 'http in', z: 'app', url: '/say', method: 'get', wires: [['topic', 'said']] },
  { id: 'topic', type: 'change', z: 'app', rules: [{ t: 'set', p: 'topic', pt: 'msg', to: 'req.query.topic', tot: 'msg' }, { t: 'set', p: 'payload', pt: 'msg', to: 'req.query.n', tot: 'msg' }], wires: [['sio']] },
  { id: 'said', type: 'http response', z: 'app', wires: [] },
  // A client's press leaves sio and is broadcast back by echo: every client sees each press once.
  { id: 'sio', type: 'sio-app', z: 'app', wires: [['echo']] },
  { id: 'echo', type: 'sio-app', z: 'app', wires: [] },
];

type Transport = 'websocket' | 'upgrade' | 'polling';
const TRANSPORTS: Record<Transport, string[]> = { websocket: ['websocket'], upgrade: ['polling', 'websocket'], polling: ['polling'] };

interface Client {
  transport: Transport;
  socket: Socket;
  disconnects: number;
  /** The pid of the instance the client is connected to. */
  pid: number;
  got: Record<string, unknown[]>;
}

describe('cluster: a module\'s socket.io server behind HAProxy spans the instances', { timeout: 300_000 }, () => {
  let pg: TestPostgres | undefined;
  let cluster: TestCluster | undefined;
  let nodes: ClusterInstance[];
  let balancer: TestBalancer;
  const clients: Client[] = [];

  before(async () => {
    pg = await startPostgres();
    cluster = await startAddressedCluster(pg.url, 'sockio', 3, { nodesDir: [FIXTURES] });
    nodes = cluster.instances;
    const token = await login(nodes[0]!);
    const r = await request(nodes[0]!.at('flows'), { method: 'POST', token, headers: { 'Runtime-API-Version': 'v2' }, json: { flows } });
    assert.equal(r.status, 200, r.text);
    for (const n of nodes) await eventually(async () => (await request(n.at('say?topic=ready&n=0'))).status === 200, 15_000);
    balancer = await startHaproxy(nodes.map((n) => n.url));
    // HAProxy answers 503 until its first checks found the instances up.
    await eventually(async () => (await Promise.all(Array.from({ length: 6 }, () => request(balancer.at('health'))))).every((r) => r.status === 200), 10_000);
    // Round-robin spreads the clients (each first greeted by its own instance, at once; the others' greetings come through the relay); more are opened until every instance holds one.
    const kinds = Object.keys(TRANSPORTS) as Transport[];
    while (clients.length < kinds.length || new Set(clients.map((c) => c.pid)).size < nodes.length) {
      assert.ok(clients.length < 12, `the balancer spread ${clients.length} clients over fewer than 3 instances`);
      clients.push(await open(kinds[clients.length % kinds.length]!));
    }
  });
  after(async () => {
    for (const c of clients) c.socket.close();
    await balancer?.stop();
    await cluster?.stop().catch(() => undefined);
    killRunnels();
    await pg?.dispose();
  });

  async function open(transport: Transport): Promise<Client> {
    const socket = connect(balancer.url, { path: '/sio/socket.io', transports: TRANSPORTS[transport], reconnectionDelay: 200, reconnectionDelayMax: 500 });
    const got: Record<string, unknown[]> = {};
    socket.onAny((event: string, value: unknown) => (got[event] ??= []).push(value));
    const pid = await new Promise<number>((resolve, reject) => {
      socket.once('hello', resolve);
      socket.once('connect_error', reject);
    });
    const client = { transport, socket, disconnects: 0, pid, got };
    socket.on('disconnect', () => client.disconnects++);
    return client;
  }

  const instanceOf = (c: Client) => nodes.find((n) => n.process.child.pid === c.pid)!;

  /** Sends `value` on `event` from `from` if given; waits until every client got it, then until a marker sent from every instance arrived after it, and answers how many times each client got `value`. */
  async function settled(event: string, value: string, live = clients, from?: ClusterInstance): Promise<number[]> {
    if (from) assert.equal((await request(from.at(`say?topic=${event}&n=${value}`))).status, 200);
    await eventually(() => live.every((c) => c.got[event]?.includes(value)), 10_000);
    // The relay keeps each sender's order: once every instance's marker is in, nothing sent before it is still on the way.
    const running = nodes.filter((n) => n.process.child.exitCode === null && n.process.child.signalCode === null);
    for (const n of running) assert.equal((await request(n.at(`say?topic=marker&n=${n.id}-${value}`))).status, 200);
    await eventually(() => live.every((c) => running.every((n) => c.got.marker?.includes(`${n.id}-${value}`))), 10_000);
    return live.map((c) => c.got[event]!.filter((v) => v === value).length);
  }

  it('a broadcast from a flow on any instance reaches every client of every instance once', async () => {
    for (const n of nodes) {
      assert.equal((await request(n.at(`say?topic=update&n=from-${n.id}`))).status, 200);
      assert.deepEqual(await settled('update', `from-${n.id}`), clients.map(() => 1), `the broadcast from ${n.id}`);
    }
  });

  it('keeps every session whichever instance its requests land on: long-polling clients stay connected, upgrading ones reach the websocket', async () => {
    await eventually(() => clients.every((c) => c.socket.io.engine.transport.name === (c.transport === 'polling' ? 'polling' : 'websocket')), 10_000);
    assert.deepEqual(clients.map((c) => c.disconnects), clients.map(() => 0));
  });

  it('what the app sends to each socket it holds reaches the clients of every instance: each client is greeted once by every instance', async () => {
    const pids = nodes.map((n) => n.process.child.pid).sort();
    await eventually(() => clients.every((c) => (c.got.hello?.length ?? 0) >= pids.length), 10_000);
    for (const c of clients) assert.deepEqual([...c.got.hello!].sort(), pids, `the greetings of a ${c.transport} client of ${c.pid}`);
  });

  it('a client\'s event runs its flow once, on the instance it is connected to, and every client sees the result once', async () => {
    for (const [i, c] of clients.entries()) {
      c.socket.emit('press', `press-${i}`);
      assert.deepEqual(await settled('pressed', `press-${i}`), clients.map(() => 1), `the press of a client on ${instanceOf(c).id}`);
    }
  });

  it('with PostgreSQL down each instance keeps serving its own clients, and delivery across instances resumes after it, nothing twice', async () => {
    const pidOf = (n: ClusterInstance) => n.process.child.pid;
    await pg!.stop();
    try {
      for (const n of nodes) {
        assert.equal((await request(n.at(`say?topic=update&n=down-${n.id}`))).status, 200);
        const own = clients.filter((c) => c.pid === pidOf(n));
        await eventually(() => own.every((c) => c.got.update?.includes(`down-${n.id}`)), 10_000);
      }
    } finally {
      await pg!.start();
    }
    let k = 0;
    await eventually(async () => {
      await request(nodes[0]!.at(`say?topic=probe&n=${++k}`));
      return clients.every((c) => (c.got.probe?.length ?? 0) > 0);
    }, 30_000, 500);
    for (const n of nodes) assert.deepEqual(await settled('update', `after-db-${n.id}`, clients, n), clients.map(() => 1));
    // The markers of every instance came after the outage: a message sent during it would have come before them.
    for (const n of nodes) {
      assert.deepEqual(clients.map((c) => c.got.update!.filter((v) => v === `down-${n.id}`).length), clients.map((c) => (c.pid === pidOf(n) ? 1 : 0)), `what ${n.id} sent during the outage`);
    }
  });

  it('the clients of a killed instance, and those whose connection it passed on, reconnect through the balancer within 5 s and get broadcasts again', async () => {
    const victim = instanceOf(clients[0]!);
    const orphans = clients.filter((c) => c.pid === victim.process.child.pid);
    const killed = performance.now();
    const back = new Map<Client, number>();
    for (const c of clients) c.socket.io.once('reconnect', () => back.set(c, performance.now() - killed));
    victim.process.child.kill('SIGKILL');
    // Until HAProxy's checks take the victim out, a request sent there fails (503) and its client
    // reconnects, as does one whose websocket went through the victim: once six requests in a row
    // (two rounds) pass, every client that was going to reconnect has.
    await eventually(async () => (await Promise.all(Array.from({ length: 6 }, () => request(balancer.at('health'))))).every((r) => r.status === 200), 10_000);
    await eventually(() => orphans.every((c) => back.has(c)) && clients.every((c) => c.socket.connected), 10_000);
    const times = [...back.values()].map((t) => Math.round(t));
    assert.ok(times.every((t) => t < 5000), `reconnected after ${times.join(', ')} ms`);
    const survivor = nodes.find((n) => n !== victim)!;
    assert.equal((await request(survivor.at('say?topic=update&n=after-kill'))).status, 200);
    assert.deepEqual(await settled('update', 'after-kill'), clients.map(() => 1));
  });

});
