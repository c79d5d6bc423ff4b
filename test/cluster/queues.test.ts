import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { deploy, type Conf } from '../helpers/deploy.js';
import { eventually, login, request, tempDir } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { killRunnels, spawnRunnel } from '../helpers/process.js';

/**
 * Queue wires across a cluster and across crashes, with real processes: three instances on one
 * PostgreSQL take 20,000 messages (RUNNEL_QUEUE_MESSAGES to change it) while one instance is
 * killed with SIGKILL and PostgreSQL restarts; then every message has been handled, duplicates are
 * only redeliveries, and each key's messages were handled in order; messages that always fail go
 * to the dead letters after maxAttempts. A single instance on file storage keeps its queue across
 * its own SIGKILL.
 */

const TOTAL = Number(process.env.RUNNEL_QUEUE_MESSAGES ?? 20_000);
const BATCH = 500;
const KEYS = 50;

const n = (id: string, type: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({ id, type, z: 't1', name: id, x: 100, y: 100, wires, ...extra });

/** Producer: POST /enqueue [numbers] → each on the queue, keyed by n mod KEYS. Consumer: one line per message handled, appended to `log`. */
function pipeline(log: string): Conf[] {
  return [
    { id: 't1', type: 'tab', label: 'queues' },
    n('in', 'http in', { url: '/enqueue', method: 'post' }, [['fan']]),
    // Each message carries the request's res (queue out leaves it out of what it stores); the last one stored answers.
    n('fan', 'function', { func: `for (const v of msg.payload) node.send({ payload: v, topic: 'k' + (v % ${KEYS}), res: msg.res, batch: msg._msgid, size: msg.payload.length }); return null;` }, [['qout']]),
    n('qout', 'queue out', { queue: 'jobs', whenFull: 'wait' }, [['count']]),
    n('count', 'function', { func: 'const c = (context.get(msg.batch) || 0) + 1; context.set(msg.batch, c); if (c < msg.size) return null; context.set(msg.batch, undefined); return { res: msg.res, statusCode: 202, payload: { stored: c } };' }, [['reply']]),
    n('reply', 'http response'),
    n('qin', 'queue in', { queue: 'jobs', concurrency: 8, key: 'topic', maxAttempts: 50 }, [['line'], []]),
    n('line', 'function', { func: 'msg.payload = JSON.stringify({ n: msg.payload, k: msg.topic, r: msg.redelivered, id: msg._msgid }); return msg;' }, [['write']]),
    n('write', 'file', { filename: log, appendNewline: true, createDir: true, overwriteFile: 'false' }),
    // Poison: every attempt fails, so each message goes to the dead-letter output after maxAttempts.
    n('pin', 'http in', { url: '/poison', method: 'post' }, [['pout']]),
    n('pout', 'queue out', { queue: 'poison' }, [['pok']]),
    n('pok', 'http response', { statusCode: '202' }),
    n('pqin', 'queue in', { queue: 'poison', key: '', maxAttempts: 2 }, [['pfail'], ['pdead']]),
    n('pfail', 'function', { func: 'node.done(new Error("poison")); return null;' }),
    n('pdead', 'function', { func: `msg.payload = JSON.stringify({ n: msg.payload.n, a: msg.attempts, id: msg._msgid }); return msg;` }, [['pwrite']]),
    n('pwrite', 'file', { filename: log.replace(/handled\.log$/, 'dead.log'), appendNewline: true, createDir: true, overwriteFile: 'false' }),
  ];
}

interface Line {
  n: number;
  k: string;
  r: boolean;
  id: string;
}

async function lines(file: string): Promise<Line[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
}

/** Every message handled; a message seen twice was redelivered; per key, first handlings in enqueue order. */
function assertExactlyHandled(seen: Line[], total: number): void {
  const first = new Map<number, Line>();
  const duplicates: Line[] = [];
  for (const l of seen) {
    if (first.has(l.n)) duplicates.push(l);
    else first.set(l.n, l);
  }
  const missing = Array.from({ length: total }, (_, i) => i).filter((i) => !first.has(i));
  assert.deepEqual(missing.slice(0, 20), [], `${missing.length} messages lost`);
  for (const d of duplicates) {
    assert.equal(d.r, true, `message ${d.n} handled twice without being flagged as a redelivery`);
    assert.equal(d.id, first.get(d.n)!.id, 'a redelivery keeps the message id');
  }
  const lastOfKey = new Map<string, number>();
  for (const l of first.values()) {
    const before = lastOfKey.get(l.k) ?? -1;
    assert.ok(l.n > before, `key ${l.k}: ${l.n} was handled after ${before}`);
    lastOfKey.set(l.k, l.n);
  }
}

describe('queue wires across a cluster', { timeout: 900_000 }, () => {
  let pg: TestPostgres;
  let cluster: TestCluster;
  let dir: string;
  let token: string;

  before(async () => {
    pg = await startPostgres();
    dir = await tempDir();
    cluster = await startCluster(pg.url, 'queues', 3, { queues: { leaseMs: 3000, pollMs: 200, backoffMs: 50 } });
    const first = cluster.instances[0];
    token = await login({ at: first.at } as never);
    await deploy(first, pipeline(path.join(dir, 'handled.log')), { token });
  });
  after(async () => {
    killRunnels();
    await cluster?.stop().catch(() => undefined);
    await pg?.dispose();
    if (dir) await removeDir(dir);
  });

  it(`hands ${TOTAL} messages over, losing none through a SIGKILL of an instance and a PostgreSQL restart`, async () => {
    const log = path.join(dir, 'handled.log');
    const handled = async () => new Set((await lines(log)).map((l) => l.n)).size;
    for (let next = 0, i = 0; next < TOTAL; next += BATCH, i++) {
      const batch = Array.from({ length: Math.min(BATCH, TOTAL - next) }, (_, j) => next + j);
      const res = await request(cluster.instances[i % 3].at('enqueue'), { method: 'POST', json: batch, token });
      assert.equal(res.status, 202);
    }
    // Everything stored (waiting or handled) before anything is killed: the producers' part is done.
    await eventually(async () => {
      const jobs = (await request(cluster.instances[0].at('queues'), { token })).body.queues.find((q: { name: string }) => q.name === 'jobs');
      return (jobs?.depth ?? 0) + (await handled()) >= TOTAL;
    }, 120_000, 200);
    await eventually(async () => (await handled()) >= TOTAL / 4, 300_000, 100);
    cluster.instances[2].process.child.kill('SIGKILL');
    await eventually(async () => (await handled()) >= TOTAL / 2, 300_000, 100);
    await pg.stop();
    await pg.start();
    const seen = (await eventually(async () => {
      const all = await lines(log);
      return new Set(all.map((l) => l.n)).size >= TOTAL ? all : undefined;
    }, 600_000, 500))!;
    assertExactlyHandled(seen, TOTAL);
    const queues = await request(cluster.instances[0].at('queues'), { token });
    assert.equal(queues.status, 200);
    assert.equal(queues.body.queues.find((q: { name: string }) => q.name === 'jobs').depth, 0);
  });

  it('sends a message whose every attempt fails, on whichever instances, to the dead letters once after maxAttempts', async () => {
    const dead = path.join(dir, 'dead.log');
    for (let i = 0; i < 10; i++) assert.equal((await request(cluster.instances[i % 2].at('poison'), { method: 'POST', json: { n: i }, token })).status, 202);
    const seen = (await eventually(async () => {
      const all = (await readFile(dead, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { n: number; a: number; id: string });
      return all.length >= 10 ? all : undefined;
    }, 60_000, 100))!;
    assert.deepEqual(seen.map((l) => l.n).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'each once');
    assert.ok(seen.every((l) => l.a === 3), 'maxAttempts 2: the third claim is the dead letter');
    await eventually(async () => (await request(cluster.instances[0].at('queues'), { token })).body.queues.find((q: { name: string }) => q.name === 'poison').depth === 0);
  });
});

describe('queue wires on one instance, across its own crash', { timeout: 120_000 }, () => {
  it('keeps stored messages through SIGKILL; the one in hand at the kill comes back flagged as a redelivery', async () => {
    const dir = await tempDir();
    try {
      const log = path.join(dir, 'handled.log');
      const settings = { queues: { pollMs: 50 } };
      // First life: the consumer never finishes a message, so the first stays in hand and the rest wait.
      const first = await spawnRunnel(dir, settings);
      await deploy(first, [
        { id: 't1', type: 'tab', label: 'q' },
        n('in', 'http in', { url: '/put', method: 'post' }, [['qout']]),
        n('qout', 'queue out', { queue: 'crash' }, [['ok']]),
        n('ok', 'http response', { statusCode: '202' }),
        n('qin', 'queue in', { queue: 'crash', key: '' }, [['stuck'], []]),
        n('stuck', 'function', { func: 'if (false) node.done(); return null;' }),
      ]);
      for (let i = 0; i < 5; i++) assert.equal((await request(new URL('put', first.url).href, { method: 'POST', json: { i } })).status, 202);
      await eventually(async () => (await request(new URL('queues', first.url).href)).body.queues[0]?.inFlight === 1);
      first.child.kill('SIGKILL');
      await first.exited;
      const second = await spawnRunnel(dir, settings);
      await deploy(second, [
        { id: 't1', type: 'tab', label: 'q' },
        n('qin', 'queue in', { queue: 'crash', key: '' }, [['line'], []]),
        n('line', 'function', { func: 'msg.payload = JSON.stringify({ n: msg.payload.i, k: "", r: msg.redelivered, id: msg._msgid }); return msg;' }, [['write']]),
        n('write', 'file', { filename: log, appendNewline: true, overwriteFile: 'false' }),
      ]);
      const seen = (await eventually(async () => {
        const all = await lines(log);
        return all.length >= 5 ? all : undefined;
      }))!;
      assert.deepEqual(seen.map((l) => l.n).sort(), [0, 1, 2, 3, 4]);
      assert.deepEqual(seen.filter((l) => l.r).map((l) => l.n), [0], 'the message in hand at the kill is the redelivery');
      second.child.kill('SIGTERM');
      await second.exited;
    } finally {
      killRunnels();
      await removeDir(dir);
    }
  });
});
