import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, login, request, adminAuth, eventually, READER_PASSWORD } from '../helpers/server.js';
import { deploy } from '../helpers/deploy.js';

/** One sample of the Prometheus text exposition format (0.0.4). */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

/** Parses the exposition format strictly: every line empty, a HELP, a TYPE or a sample of a declared family. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  for (const line of text.slice(0, -1).split('\n')) {
    // The format ignores empty lines (prom-client separates families with them).
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      assert.match(meta[2], METRIC_NAME);
      if (meta[1] === 'TYPE') {
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(meta[3]), line);
        types.set(meta[2], meta[3]);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < m[2].length) {
        const at = LABEL.lastIndex;
        const l = LABEL.exec(m[2]);
        assert.ok(l && l.index === at, `bad labels in: ${line}`);
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      }
    }
    const family = m[1].replace(/_(bucket|sum|count|total|created)$/, '');
    assert.ok(types.has(m[1]) || types.has(family) || types.has(`${family}_total`), `sample of an undeclared family: ${line}`);
    // Values are Go ParseFloat floats: NaN and Inf in any case (prom-client writes "Nan" for an empty lag histogram).
    const special = /^([+-]?)(inf|infinity|nan)$/i.exec(m[3]);
    const value = special ? (special[2].toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity) : Number(m[3]);
    assert.ok(!Number.isNaN(value) || special, line);
    samples.push({ name: m[1], labels, value });
  }
  return samples;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.reduce((sum, s) => sum + s.value, 0);
}

const FLOWS = [
  { id: 't1', type: 'tab', label: 't1' },
  { id: 'in', type: 'http in', z: 't1', url: '/hello/:name', method: 'get', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 't1', func: 'if (msg.req.params.name === "bad") { node.error("bad name", msg); return null; } msg.payload = "hi"; return msg;', outputs: 1, x: 2, y: 1, wires: [['out']] },
  { id: 'out', type: 'http response', z: 't1', x: 3, y: 1, wires: [] },
];

describe('GET /metrics', () => {
  test('is off by default', async () => {
    const server = await startServer();
    try {
      assert.equal((await request(server.at('metrics'))).status, 404);
    } finally {
      await server.dispose();
    }
  });

  test('counts messages per node type, http-in and admin requests, deploys, logins; shows the rev and process metrics', async () => {
    const server = await startServer({ adminAuth: adminAuth(), metrics: { enabled: true } });
    try {
      const token = await login(server);
      const scrape = async () => {
        const r = await fetch(server.at('metrics'));
        assert.equal(r.status, 200);
        assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
        return parseExposition(await r.text());
      };
      const before = await scrape();
      const rev = await deploy(server, FLOWS, { api: 'v2', token });
      for (let i = 0; i < 5; i++) assert.equal((await request(server.at(`hello/n${i}`))).status, 200);
      await fetch(server.at('hello/bad'), { signal: AbortSignal.timeout(200) }).catch(() => undefined);
      await request(server.at('auth/token'), { method: 'POST', json: { client_id: 'runtime-admin', grant_type: 'password', username: 'admin', password: 'wrong' } });
      const after = await scrape();
      const grew = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);

      assert.equal(grew('runnel_messages_sent_total', { type: 'http in' }), 6);
      assert.equal(grew('runnel_messages_received_total', { type: 'function' }), 6);
      assert.equal(grew('runnel_messages_sent_total', { type: 'function' }), 5);
      assert.equal(grew('runnel_messages_received_total', { type: 'http response' }), 5);
      assert.equal(grew('runnel_node_errors_total', { type: 'function' }), 1);
      assert.equal(grew('runnel_http_in_requests_total', { method: 'GET', route: '/hello/:name', status: '200' }), 5);
      assert.equal(grew('runnel_http_in_request_duration_seconds_count', { method: 'GET', route: '/hello/:name' }), 5);
      assert.equal(grew('runnel_admin_requests_total', { method: 'POST', route: '/flows', status: '200' }), 1);
      assert.equal(grew('runnel_deploys_total', { type: 'full', outcome: 'success' }), 1);
      assert.equal(grew('runnel_deploy_duration_seconds_count', { type: 'full' }), 1);
      assert.equal(value(after, 'runnel_flows_revision_info', { rev }), 1);
      assert.equal(after.filter((s) => s.name === 'runnel_flows_revision_info').length, 1);
      assert.equal(value(after, 'runnel_nodes_running'), 3);
      assert.equal(grew('runnel_logins_total', { outcome: 'failure' }), 1);
      assert.equal(value(before, 'runnel_logins_total', { outcome: 'success' }), 1);
      for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p50_seconds', 'nodejs_eventloop_lag_p99_seconds', 'runnel_message_queue_depth', 'runnel_modules_installed']) {
        assert.ok(after.some((s) => s.name === name), `${name} is exported`);
      }
      // Cardinality: no label carries a node id or a concrete URL.
      const labelValues = after.flatMap((s) => Object.values(s.labels));
      assert.ok(!labelValues.some((v) => ['in', 'fn', 'out', '/hello/n1', '/hello/bad'].includes(v)));
      const stale = await request(server.at('flows'), { method: 'POST', token, headers: { 'Runtime-API-Version': 'v2' }, json: { flows: [], rev: 'old' } });
      assert.equal(stale.status, 409);
      assert.equal(value(await scrape(), 'runnel_deploys_total', { type: 'full', outcome: 'conflict' }), 1);
    } finally {
      await server.dispose();
    }
  });

  test('counts messages and errors per node type on the hooked send path (RED.hooks message hooks installed) too', async () => {
    const server = await startServer({ metrics: { enabled: true } });
    const hooks = server.instance.runtime.services.hooks;
    try {
      await deploy(server, FLOWS);
      const seen = { onSend: 0, onReceive: 0 };
      hooks.add('onSend.metrics', () => {
        seen.onSend++;
      });
      // A hook's error stops the delivery and is the sender's error, as in Node-RED.
      hooks.add('preDeliver.metrics', (e: { destination: { id: string }; msg: { req?: { params?: { name?: string } } } }) => {
        if (e.destination.id === 'fn' && e.msg.req?.params?.name === 'veto') throw new Error('vetoed by a hook');
      });
      hooks.add('onReceive.metrics', () => {
        seen.onReceive++;
      });
      const scrape = async () => parseExposition(await (await fetch(server.at('metrics'))).text());
      const before = await scrape();
      for (let i = 0; i < 5; i++) assert.equal((await request(server.at(`hello/n${i}`))).status, 200);
      for (const name of ['bad', 'veto']) await fetch(server.at(`hello/${name}`), { signal: AbortSignal.timeout(200) }).catch(() => undefined);
      const errorsOf = (samples: Sample[], type: string) => value(samples, 'runnel_node_errors_total', { type });
      await eventually(async () => errorsOf(await scrape(), 'http in') - errorsOf(before, 'http in') === 1 && errorsOf(await scrape(), 'function') - errorsOf(before, 'function') === 1);
      const after = await scrape();
      const grew = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
      assert.ok(seen.onSend >= 11 && seen.onReceive >= 11, JSON.stringify(seen));
      assert.equal(grew('runnel_messages_sent_total', { type: 'http in' }), 6);
      assert.equal(grew('runnel_messages_received_total', { type: 'function' }), 6);
      assert.equal(grew('runnel_messages_sent_total', { type: 'function' }), 5);
      assert.equal(grew('runnel_messages_received_total', { type: 'http response' }), 5);
      assert.equal(grew('runnel_node_errors_total', { type: 'function' }), 1);
      assert.equal(grew('runnel_node_errors_total', { type: 'http in' }), 1);
    } finally {
      for (const name of ['onSend.metrics', 'preDeliver.metrics', 'onReceive.metrics']) hooks.remove(name);
      await server.dispose();
    }
  });

  test('metrics.permission requires a token with it; metrics.port serves them on a listener of their own', async () => {
    const guarded = await startServer({ adminAuth: adminAuth(), metrics: { enabled: true, permission: 'metrics.read' } });
    try {
      const anonymous = await request(guarded.at('metrics'));
      assert.deepEqual([anonymous.status, anonymous.body.code], [401, 'unauthorized']);
      const reader = await login(guarded, 'reader', READER_PASSWORD, 'read');
      const r = await fetch(guarded.at('metrics'), { headers: { authorization: `Bearer ${reader}` } });
      assert.equal(r.status, 200);
      parseExposition(await r.text());
    } finally {
      await guarded.dispose();
    }
    const separate = await startServer({ metrics: { enabled: true, port: 0 } });
    try {
      assert.equal((await request(separate.at('metrics'))).status, 404);
      const url = separate.instance.metricsUrl;
      assert.ok(url);
      const r = await fetch(url);
      assert.equal(r.status, 200);
      assert.ok(parseExposition(await r.text()).some((s) => s.name === 'runnel_nodes_running'));
      assert.equal((await request(new URL('/other', url).href)).status, 404);
    } finally {
      await separate.dispose();
    }
  });

  test('bad metrics settings are refused at start with a clear reason', async () => {
    for (const metrics of [{ enabled: 'yes' }, { enabled: true, port: 70000 }, { enabled: true, permission: '' }, 'on']) {
      await assert.rejects(startServer({ metrics }), /metrics/);
    }
  });
});

describe('GET /health, GET /health/ready', () => {
  test('answer without authentication and without details; ready turns 503 when storage stops answering', async () => {
    const server = await startServer({ adminAuth: adminAuth() });
    try {
      const live = await request(server.at('health'));
      assert.deepEqual([live.status, live.body], [200, { status: 'ok' }]);
      const ready = await request(server.at('health/ready'));
      assert.deepEqual([ready.status, ready.body], [200, { status: 'ready' }]);
      await server.instance.runtime.storage.close();
      const down = await request(server.at('health/ready'));
      assert.deepEqual([down.status, down.body], [503, { status: 'unavailable' }]);
      assert.equal((await request(server.at('health'))).status, 200);
    } finally {
      await server.dispose();
    }
  });
});
