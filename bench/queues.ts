/**
 * Queue wires, measured (`npm run bench:queues`): messages per second through one durable queue
 * with 1 and 3 Runnel instances on one PostgreSQL, the hand-off latency of a single message on an
 * idle queue (p50/p99), and each instance's CPU per message — beside the floor: a bare `pg` client
 * running the same statements Runnel's PostgreSQL queue runs (batched inserts, SKIP LOCKED claims,
 * batched deletes) on the same server, with as many clients as Runnel has instances. On a machine
 * with few cores the instances, PostgreSQL and the load share them: compare the ratio, not the
 * absolute numbers. Beside them, the same pipeline through MQTT QoS 1 on mosquitto (not durable
 * across a broker restart without persistence, and without per-key order).
 */
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { percentile } from './stats.js';
import { cpuSeconds } from './systems.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { startMosquitto } from '../test/helpers/mqtt.js';
import { spawnRunnel, type RunnelProcess } from '../test/helpers/process.js';

const TOTAL = Number(process.env.RUNNEL_BENCH_QUEUE_MESSAGES ?? 20_000);
const BATCH = 500;
const LATENCY_ROUNDS = 200;
const CONCURRENCY = 16;
const STALL_MS = 30_000;
/** Which rows to measure: RUNNEL_BENCH_QUEUE_INSTANCES=1 for the single-instance row alone. */
const ROWS = (process.env.RUNNEL_BENCH_QUEUE_INSTANCES ?? '1,3').split(',').map(Number);
const BODY = JSON.stringify({ payload: { order: 12345, items: ['a', 'b', 'c'] }, topic: 'orders' });
/**
 * Each row is measured twice: messages spread over 64 keys (\`queue in\` keeps each key's order, so
 * a key's next message waits for the one before), and without keys. Runnel and the floor store the
 * same keys: comparing a keyed Runnel with an unkeyed floor made the ratio look four times worse.
 */
const KEYINGS = [64, 0];

const n = (id: string, type: string, extra: Record<string, unknown> = {}, wires: string[][] = [[]]) => ({ id, type, z: 't1', name: id, x: 100, y: 100, wires, ...extra });

/** Producer: POST /enqueue {count} stores that many messages and answers once all are stored; consumers count what they finish (GET /handled). */
const FLOWS = [
  { id: 't1', type: 'tab', label: 'bench' },
  n('in', 'http in', { url: '/enqueue', method: 'post' }, [['fan']]),
  n('fan', 'function', { func: 'for (let i = 0; i < msg.payload.count; i++) node.send({ payload: { t: Date.now(), i }, topic: msg.payload.keys ? "k" + (i % msg.payload.keys) : undefined, res: msg.res, batch: msg._msgid, size: msg.payload.count }); return null;' }, [['qout']]),
  n('qout', 'queue out', { queue: 'bench' }, [['stored']]),
  n('stored', 'function', { func: 'const c = (context.get(msg.batch) || 0) + 1; context.set(msg.batch, c); if (c < msg.size) return null; context.set(msg.batch, undefined); return { res: msg.res, payload: { stored: c } };' }, [['reply']]),
  n('reply', 'http response'),
  n('qin', 'queue in', { queue: 'bench', concurrency: CONCURRENCY, key: 'topic' }, [['count'], []]),
  n('count', 'function', { func: 'global.set("handled", (global.get("handled") || 0) + 1); const l = global.get("lat") || []; if (msg.payload.one) { l.push(Date.now() - msg.payload.t); global.set("lat", l); } return null;' }),
  n('get', 'http in', { url: '/handled', method: 'get' }, [['read']]),
  n('read', 'function', { func: 'msg.payload = { handled: global.get("handled") || 0, lat: global.get("lat") || [] }; return msg;' }, [['reply']]),
  n('one', 'http in', { url: '/one', method: 'post' }, [['mark']]),
  n('mark', 'function', { func: 'msg.payload = { t: Date.now(), one: true }; return msg;' }, [['qone']]),
  n('qone', 'queue out', { queue: 'bench' }, [['reply']]),
];

/**
 * The same pipeline through MQTT QoS 1 on mosquitto: POST /publish {count} publishes that many,
 * and a shared subscription spreads them over the instances to the same counting function.
 */
const mqttFlows = (port: number) => [
  { id: 'mb', type: 'mqtt-broker', name: 'mosquitto', broker: '127.0.0.1', port: String(port), clientid: '', autoConnect: true, usetls: false, protocolVersion: '5', keepalive: '60', cleansession: true, autoUnsubscribe: true },
  n('min', 'http in', { url: '/publish', method: 'post' }, [['mfan']]),
  n('mfan', 'function', { outputs: 2, func: 'for (let i = 0; i < msg.payload.count; i++) node.send([{ payload: { t: Date.now(), i } }, null]); return [null, { res: msg.res, payload: { sent: msg.payload.count } }];' }, [['mout'], ['reply']]),
  n('mout', 'mqtt out', { topic: 'bench/q', qos: '1', retain: 'false', broker: 'mb' }),
  n('msub', 'mqtt in', { topic: '$share/bench/bench/q', qos: '1', datatype: 'json', broker: 'mb', nl: false, rap: true, rh: 0, inputs: 0 }, [['count']]),
];

/**
 * In-process messages, no queue: POST /inproc {count} sends that many through two functions and
 * answers once the last has passed. Measured on an instance of its own, with and without an idle
 * `queue in` deployed beside it: its completion hooks must not slow messages that never see a queue.
 */
const inProcessFlows = (withQueueIn: boolean) => [
  { id: 't2', type: 'tab', label: 'in-process' },
  { ...n('pin', 'http in', { url: '/inproc', method: 'post' }, [['pfan']]), z: 't2' },
  { ...n('pfan', 'function', { func: 'const count = msg.payload.count; for (let i = 0; i < count; i++) node.send({ payload: i, res: msg.res, last: i === count - 1 }); return null;' }, [['pstep']]), z: 't2' },
  { ...n('pstep', 'function', { func: 'msg.payload++; return msg;' }, [['pend']]), z: 't2' },
  { ...n('pend', 'function', { func: 'return msg.last ? { res: msg.res, payload: { done: true } } : null;' }, [['preply']]), z: 't2' },
  { ...n('preply', 'http response'), z: 't2' },
  ...(withQueueIn ? [{ ...n('pq', 'queue in', { queue: 'idle' }, [[], []]), z: 't2' }] : []),
];

async function inProcessRate(url: string): Promise<number> {
  const count = 20_000;
  const began = performance.now();
  for (let round = 0; round < 5; round++) await post(`${url}inproc`, { count });
  return (5 * count) / ((performance.now() - began) / 1000);
}

async function call(url: string, init?: RequestInit): Promise<any> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const post = (url: string, body: unknown) => call(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function handled(urls: string[]): Promise<number> {
  const counts = await Promise.all(urls.map((u) => call(`${u}handled`)));
  return counts.reduce((sum: number, c: { handled: number }) => sum + c.handled, 0);
}

/** Messages per second from the first enqueue until every message has been handled somewhere. */
async function throughput(urls: string[], instances: RunnelProcess[], keys: number, route = 'enqueue'): Promise<{ rate: number; cpuUsPerMessage: number; lost: number }> {
  const start = await handled(urls);
  const cpuBefore = await Promise.all(instances.map((p) => cpuSeconds(p.child.pid!)));
  const began = performance.now();
  const producers = urls.map(async (u, i) => {
    for (let sent = i * BATCH; sent < TOTAL; sent += BATCH * urls.length) await post(`${u}${route}`, { count: Math.min(BATCH, TOTAL - sent), keys });
  });
  await Promise.all(producers);
  // A pipeline that loses messages (mosquitto drops QoS 1 messages beyond a slow subscriber's
  // queue) would be waited for for ever: after STALL_MS without progress the row reports the loss.
  let seen = 0;
  let progressed = performance.now();
  for (;;) {
    const now = (await handled(urls)) - start;
    if (now >= TOTAL) break;
    if (now > seen) [seen, progressed] = [now, performance.now()];
    else if (performance.now() - progressed > STALL_MS) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - began) / 1000;
  const cpuAfter = await Promise.all(instances.map((p) => cpuSeconds(p.child.pid!)));
  const cpu = cpuAfter.reduce((s, a, i) => s + a - cpuBefore[i]!, 0);
  return { rate: TOTAL / seconds, cpuUsPerMessage: (cpu / TOTAL) * 1e6, lost: TOTAL - Math.min(TOTAL, (await handled(urls)) - start) };
}

/** One message at a time on an idle queue: from the producing request to the consumer's function. */
async function latency(url: string, urls: string[]): Promise<number[]> {
  const before = (await Promise.all(urls.map((u) => call(`${u}handled`)))).flatMap((c: { lat: number[] }) => c.lat).length;
  for (let i = 0; i < LATENCY_ROUNDS; i++) {
    const target = before + i + 1;
    await post(`${url}one`, {});
    for (;;) {
      const lats = (await Promise.all(urls.map((u) => call(`${u}handled`)))).flatMap((c: { lat: number[] }) => c.lat);
      if (lats.length >= target) break;
      await new Promise((r) => setTimeout(r, 1));
    }
  }
  const all = (await Promise.all(urls.map((u) => call(`${u}handled`)))).flatMap((c: { lat: number[] }) => c.lat);
  return all.slice(before);
}

/** The same statements as src/storage/postgres/queues.ts, from bare clients: enqueue in batches, claim, delete in batches. */
async function floor(url: string, clients: number, keys: number): Promise<number> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(`DROP SCHEMA IF EXISTS floor CASCADE; CREATE SCHEMA floor;
    CREATE TABLE floor.q (seq bigserial PRIMARY KEY, queue text NOT NULL, id text NOT NULL, key text, body text NOT NULL, attempts int NOT NULL DEFAULT 0,
      enqueued_at timestamptz NOT NULL DEFAULT now(), visible_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz);
    CREATE INDEX ON floor.q (queue, seq); CREATE INDEX ON floor.q (queue, key, seq) WHERE key IS NOT NULL;`);
  await setup.end();
  const per = Math.ceil(TOTAL / clients);
  // The clients take from one queue, as Runnel's instances do: each stops once all are handled,
  // not after a share of its own (one that got fewer would wait for ever).
  let handledByAll = 0;
  const began = performance.now();
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const producer = new pg.Client({ connectionString: url });
    const consumer = new pg.Client({ connectionString: url });
    await producer.connect();
    await consumer.connect();
    const produce = (async () => {
      for (let sent = 0; sent < per; sent += BATCH) {
        const ids = Array.from({ length: Math.min(BATCH, per - sent) }, (_, i) => `${c}-${sent + i}`);
        await producer.query('BEGIN');
        await producer.query(`INSERT INTO floor.q (queue, id, key, body) SELECT 'bench', * FROM unnest($1::text[], $2::text[], $3::text[])`, [ids, ids.map((_, i) => (keys ? `k${(sent + i) % keys}` : null)), ids.map(() => BODY)]);
        await producer.query("SELECT pg_notify('floor', 'bench')");
        await producer.query('COMMIT');
      }
    })();
    while (handledByAll < clients * per) {
      const { rows } = await consumer.query<{ seq: string }>(
        `UPDATE floor.q m SET lease_until = now() + interval '30 seconds', attempts = attempts + 1 WHERE m.seq IN (
           SELECT c.seq FROM floor.q c WHERE c.queue = 'bench' AND c.visible_at <= now() AND (c.lease_until IS NULL OR c.lease_until < now())
             AND (c.key IS NULL OR NOT EXISTS (SELECT 1 FROM floor.q e WHERE e.queue = c.queue AND e.key = c.key AND e.seq < c.seq))
           ORDER BY c.seq LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING m.seq`,
        [CONCURRENCY],
      );
      if (rows.length === 0) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      await consumer.query('DELETE FROM floor.q WHERE queue = $1 AND seq = ANY($2::bigint[])', ['bench', rows.map((r) => r.seq)]);
      handledByAll += rows.length;
    }
    await produce;
    await producer.end();
    await consumer.end();
  }));
  return (clients * per) / ((performance.now() - began) / 1000);
}

async function main(): Promise<void> {
  const pgServer = await startPostgres();
  const mosquitto = await startMosquitto();
  const root = path.join(os.tmpdir(), `runnel-bench-queues-${process.pid}`);
  const instances: RunnelProcess[] = [];
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    const start = async (i: number) => {
      const dir = path.join(root, `n${i}`);
      await mkdir(dir, { recursive: true });
      const p = await spawnRunnel(dir, { storage: { type: 'postgres', url: pgServer.url, schema: 'bench' }, instanceId: `n${i}`, credentialSecret: 'bench' });
      instances.push(p);
      // An instance runs the flows once it has them (deployed, or read from the database at start).
      for (;;) {
        if (await fetch(`${p.url}handled`).then((r) => r.ok, () => false)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const first = path.join(root, 'n0');
    await mkdir(first, { recursive: true });
    const p0 = await spawnRunnel(first, { storage: { type: 'postgres', url: pgServer.url, schema: 'bench' }, instanceId: 'n0', credentialSecret: 'bench' });
    instances.push(p0);
    await post(`${p0.url}flows`, [...FLOWS, ...mqttFlows(mosquitto.port)]);
    say(`## Queue wires: ${TOTAL.toLocaleString('en')} messages through one queue on one PostgreSQL (${os.availableParallelism()} cores, load average ${os.loadavg()[0]!.toFixed(1)})`);
    say('');
    say('| instances | keys | Runnel msg/s | bare pg floor msg/s (same statements, as many clients) | ratio | CPU per message (all instances) |');
    say('|---|---|---|---|---|---|');
    for (const count of ROWS) {
      while (instances.length < count) await start(instances.length);
      const urls = instances.map((p) => p.url);
      for (const keys of KEYINGS) {
        const runnel = await throughput(urls, instances, keys);
        const bare = await floor(pgServer.url, count, keys);
        if (runnel.lost) throw new Error(`${runnel.lost} of ${TOTAL} queued messages were never handled`);
        say(`| ${count} | ${keys || 'none'} | ${Math.round(runnel.rate).toLocaleString('en')} | ${Math.round(bare).toLocaleString('en')} | ${(runnel.rate / bare).toFixed(2)} | ${Math.round(runnel.cpuUsPerMessage)} µs |`);
      }
      const mqtt = await throughput(urls, instances, 0, 'publish');
      const rate = mqtt.lost ? `${mqtt.lost} of ${TOTAL} never arrived` : Math.round(mqtt.rate).toLocaleString('en');
      say(`| ${count} | none, through MQTT QoS 1 on mosquitto instead | ${rate} | | | ${Math.round(mqtt.cpuUsPerMessage)} µs |`);
    }
    const urls = instances.map((p) => p.url);
    const lats = await latency(urls[0]!, urls);
    const alone = path.join(root, 'in-process');
    await mkdir(alone, { recursive: true });
    const single = await spawnRunnel(alone, {});
    instances.push(single);
    const rates: string[] = [];
    for (const withQueueIn of [false, true, false, true]) {
      await post(`${single.url}flows`, inProcessFlows(withQueueIn));
      await inProcessRate(single.url);
      rates.push(`${withQueueIn ? 'with' : 'without'} ${Math.round(await inProcessRate(single.url)).toLocaleString('en')}`);
    }
    say('');
    say(`Idle hand-off latency (${lats.length} single messages, ${urls.length} instance(s); POST → queue out → stored → queue in on any instance → function): p50 ${percentile(lats, 50)} ms, p99 ${percentile(lats, 99)} ms.`);
    say('');
    say(`In-process messages/s, no queue on their path (two functions, one instance), without and with an idle queue in deployed beside them: ${rates.join(', ')}.`);
  } finally {
    for (const p of instances) p.child.kill('SIGTERM');
    await Promise.all(instances.map((p) => p.exited));
    await pgServer.dispose();
    await mosquitto.close();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench queues: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
