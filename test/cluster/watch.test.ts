import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { clusterSuite, type ClusterInstance } from '../helpers/cluster.js';
import { WebSocket } from 'ws';
import { Editor, type Entry } from '../helpers/comms.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { ADMIN_PASSWORD, eventually, request } from '../helpers/server.js';

/** Three instances on one database, an editor on each: what runs on one instance shows in every editor. */

const flows = [
  { id: 'web', type: 'tab', label: 'Web' },
  { id: 'in', type: 'http in', z: 'web', url: '/emit', method: 'get', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 'web', outputs: 1, x: 1, y: 1, wires: [['dbg', 'out']],
    func: "node.status({text: 'from ' + msg.req.query.n}); if (msg.req.query.warn) node.warn('warned ' + msg.req.query.n); msg.payload = msg.req.query.n; return msg;" },
  { id: 'dbg', type: 'debug', z: 'web', name: 'seen', active: true, tosidebar: true, complete: 'payload', targetType: 'msg', x: 1, y: 1, wires: [] },
  { id: 'out', type: 'http response', z: 'web', x: 1, y: 1, wires: [] },
  { id: 'live', type: 'websocket-listener', path: '/ws/live', wholemsg: 'false' },
  { id: 'wsin', type: 'websocket in', z: 'web', server: 'live', client: '', x: 1, y: 1, wires: [['echo']] },
  { id: 'echo', type: 'function', z: 'web', outputs: 1, x: 1, y: 1, wires: [['wsout']],
    func: 'msg.payload = JSON.stringify({echo: msg.payload, session: msg._session.id}); return msg;' },
  { id: 'wsout', type: 'websocket out', z: 'web', server: 'live', client: '', x: 1, y: 1, wires: [] },
  { id: 'tell', type: 'http in', z: 'web', url: '/tell', method: 'get', x: 1, y: 1, wires: [['address', 'out']] },
  { id: 'address', type: 'function', z: 'web', outputs: 1, x: 1, y: 1, wires: [['wsout']],
    func: "if (msg.req.query.session) msg._session = {type: 'websocket', id: msg.req.query.session}; msg.payload = msg.req.query.n; return msg;" },
  { id: 'sched', type: 'tab', label: 'Scheduler', env: [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true', type: 'str' }] },
  { id: 'once', type: 'inject', z: 'sched', once: true, onceDelay: 0.1, repeat: '', props: [{ p: 'payload' }], payload: '', payloadType: 'date', x: 1, y: 1, wires: [['pst']] },
  { id: 'pst', type: 'function', z: 'sched', outputs: 0, x: 1, y: 1, wires: [], func: "node.status({fill: 'green', text: 'on the primary'});" },
];

describe('cluster: every editor sees the whole cluster', { timeout: 120_000 }, () => {
  let nodes: ClusterInstance[];
  let pg: TestPostgres;
  let token: string;
  const editors: Editor[] = [];

  const suite = clusterSuite('watch', 3);
  before(async () => {
    ({ nodes, pg } = suite);
    const login = await request(nodes[0]!.at('auth/token'), {
      method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', scope: '*', username: 'admin', password: ADMIN_PASSWORD },
    });
    token = login.body.access_token as string;
    for (const n of nodes) {
      const editor = new Editor(n.url);
      await editor.send({ auth: token });
      await editor.send({ subscribe: 'debug' });
      await editor.send({ subscribe: 'status/#' });
      editors.push(editor);
    }
    const r = await request(nodes[0]!.at('flows'), { method: 'POST', token, headers: { 'Runtime-API-Version': 'v2' }, json: { flows } });
    assert.equal(r.status, 200, r.text);
    for (const n of nodes) await eventually(async () => (await request(n.at('emit?n=ready'))).status === 200, 15_000);
  });
  after(() => {
    for (const e of editors) e.close();
  });

  const debug = (editor: Editor, payload: string) => editor.on('debug').filter((e: Entry) => e.data.msg === payload);

  it('shows a debug message from one instance once in every editor, tagged with that instance in the others', async () => {
    assert.equal((await request(nodes[1]!.at('emit?n=one&warn=1'))).text, 'one');
    for (const editor of editors) await eventually(() => debug(editor, 'one').length === 1 && debug(editor, 'warned one').length === 1, 10_000);
    await sleep(500);
    const names = editors.map((editor) => [...debug(editor, 'one'), ...debug(editor, 'warned one')].map((e) => e.data.name));
    assert.deepEqual(names, [['[node1] seen', '[node1]'], ['seen', undefined], ['[node1] seen', '[node1]']]);
    // The status `fn` set on node1 came before its debug message: where `fn` runs too, each editor shows its own instance's.
    for (const i of [0, 2]) assert.ok(!editors[i]!.on('status/fn').some((e) => e.data.text === 'from one'), `editor on node${i}`);
    assert.ok(editors[1]!.on('status/fn').some((e) => e.data.text === 'from one'));
  });

  it('shows the status of a node on a primary-only tab in the editors of the instances that do not run it', async () => {
    for (const editor of editors) await eventually(() => editor.on('status/pst').some((e) => e.data.text === 'on the primary'), 15_000);
  });

  it('sends a websocket out broadcast to the clients of every instance, a reply to its session on whichever instance holds it, and runs websocket in once', async () => {
    const clients = await Promise.all(nodes.map(async (n) => {
      const ws = new WebSocket(n.at('ws/live').replace(/^http/, 'ws'));
      const got: string[] = [];
      ws.on('message', (d) => got.push(String(d)));
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      return { ws, got };
    }));
    try {
      assert.equal((await request(nodes[1]!.at('tell?n=to-all'))).status, 200);
      for (const c of clients) await eventually(() => c.got.includes('to-all'), 10_000);

      const far = clients[2]!;
      far.ws.send('hello');
      const echo = await eventually(() => far.got.find((m) => m.startsWith('{"echo":"hello"')), 10_000);
      const session = (JSON.parse(echo!) as { session: string }).session;
      assert.equal((await request(nodes[0]!.at(`tell?n=just-you&session=${session}`))).status, 200);
      await eventually(() => far.got.includes('just-you'), 10_000);
      await sleep(500);
      assert.deepEqual(far.got.filter((m) => m.startsWith('{"echo"')).length, 1, 'websocket in ran the flow once, on the instance holding the client');
      for (const c of clients) assert.equal(c.got.filter((m) => m === 'to-all').length, 1);
      assert.deepEqual(clients.slice(0, 2).map((c) => c.got.includes('just-you')), [false, false]);
    } finally {
      for (const c of clients) c.ws.terminate();
    }
  });

  it('keeps each instance showing its own debug output while the database is down, and relays again without duplicates once it is back', async () => {
    await pg.stop();
    try {
      assert.equal((await request(nodes[1]!.at('emit?n=down'))).text, 'down');
      await eventually(() => debug(editors[1]!, 'down').length === 1, 10_000);
    } finally {
      await pg.start();
    }
    let i = 0;
    await eventually(async () => {
      await request(nodes[1]!.at(`emit?n=up${i++}`));
      return editors[0]!.on('debug').some((e) => String(e.data.msg).startsWith('up'));
    }, 30_000, 200);
    await request(nodes[1]!.at('emit?n=last'));
    for (const editor of editors) await eventually(() => debug(editor, 'last').length === 1, 10_000);
    await sleep(500);
    for (const [n, editor] of editors.entries()) {
      // Every instance answered one `ready` in the set-up.
      const payloads = editor.on('debug').map((e) => String(e.data.msg)).filter((p) => p !== 'ready');
      assert.equal(new Set(payloads).size, payloads.length, `node${n}'s editor saw a message twice: ${payloads.join(' ')}`);
    }
  });
});
