import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deploy, type Conf } from '../helpers/deploy.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { eventually, login, request, startServer, adminAuth, READER_PASSWORD, type TestServer } from '../helpers/server.js';
import { ROOT } from '../helpers/process.js';

/**
 * The queue nodes on one instance (file storage), through the real HTTP server: an order intake
 * that answers 202 once the order is stored, processing that acknowledges when the flow after
 * `queue in` finishes, retries, dead letters, order by key, bounds, bad messages, GET /queues and
 * purging. Restarts and kills are in test/cluster/queues.test.ts.
 */

const n = (id: string, type: string, extra: Conf = {}, wires: string[][] = [[]]): Conf => ({ id, type, z: 't1', name: id, x: 100, y: 100, wires, ...extra });

const FLOWS: Conf[] = [
  { id: 't1', type: 'tab', label: 'queues' },
  // The intake: answers 202 once the order is on the queue, 503 with the code when it cannot be.
  n('in', 'http in', { url: '/orders', method: 'post' }, [['mark']]),
  n('mark', 'function', { func: 'if (msg.payload && msg.payload.bad === "function") msg.payload.f = function () {}; if (msg.payload && msg.payload.bad === "circular") msg.payload.self = msg.payload; if (msg.payload && msg.payload.big) msg.payload.big = "x".repeat(msg.payload.big); return msg;' }, [['qout']]),
  n('qout', 'queue out', { queue: 'orders', maxLength: '5' }, [['accepted']]),
  n('accepted', 'change', { rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '202', tot: 'num' }, { t: 'set', p: 'payload', pt: 'msg', to: '{"accepted":true}', tot: 'json' }] }, [['reply']]),
  n('reply', 'http response'),
  n('unnamed', 'http in', { url: '/unnamed', method: 'post' }, [['qnone']]),
  n('qnone', 'queue out', { queue: '' }, [['accepted']]),
  n('qcatch', 'catch', { scope: ['qout', 'qnone'], uncaught: false }, [['refused']]),
  n('refused', 'change', { rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '503', tot: 'num' }, { t: 'set', p: 'payload', pt: 'msg', to: 'error', tot: 'msg' }] }, [['reply']]),
  // Processing: a queue with no consumer holds orders; `work` is consumed below.
  n('wout', 'inject', { props: [], repeat: '', once: false }, [['wq']]),
  n('wq', 'queue out', { queue: 'work' }),
  n('win', 'queue in', { queue: 'work', concurrency: 4, key: 'topic', maxAttempts: 2, timeout: 30 }, [['slow'], ['dead']]),
  n('slow', 'function', { func: 'setTimeout(() => { node.send(msg); node.done(); }, msg.payload.wait || 0); return null;' }, [['retry']]),
  n('retry', 'function', { func: 'if (msg.payload.fail && msg.attempts <= msg.payload.fail) { node.done(new Error("attempt " + msg.attempts + " failed")); return null; } return msg;' }, [['done']]),
  n('done', 'test-capture'),
  n('dead', 'test-capture'),
  // A queue in with Order by left empty: no message waits for another of its topic.
  n('fq', 'queue out', { queue: 'free' }),
  n('fin', 'queue in', { queue: 'free', concurrency: 2, key: '' }, [['fslow'], []]),
  n('fslow', 'function', { func: 'setTimeout(() => { node.send(msg); node.done(); }, msg.payload.wait); return null;' }, [['fdone']]),
  n('fdone', 'test-capture'),
];

async function post(server: TestServer, body: unknown) {
  return request(server.at('orders'), { method: 'POST', json: body });
}

describe('queue nodes on one instance', { timeout: 60_000 }, () => {
  let server: TestServer;
  let capture: Capture;
  let token: string;

  before(async () => {
    server = await startServer({ adminAuth: adminAuth(), queues: { pollMs: 20, backoffMs: 20 }, metrics: { enabled: true } });
    capture = installCapture(server);
    token = await login(server);
    await deploy(server, FLOWS, { token });
  });
  after(() => server?.dispose());

  const put = (payload: Record<string, unknown>, topic?: string) => {
    const node = server.instance.runtime.services.nodes.get('wq');
    assert.ok(node, 'queue out is running');
    node.receive({ payload, ...(topic === undefined ? {} : { topic }) });
  };

  it('answers 202 only once an order is stored, and GET /queues shows it waiting', async () => {
    const res = await post(server, { order: 1 });
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { accepted: true });
    const listed = await request(server.at('queues'), { token });
    assert.equal(listed.status, 200);
    const orders = listed.body.queues.find((q: { name: string }) => q.name === 'orders');
    assert.equal(orders.depth, 1);
    assert.equal(orders.inFlight, 0);
    assert.ok(orders.oldestAgeMs >= 0);
    assert.ok(orders.rates.enqueued > 0);
  });

  it('refuses what JSON cannot carry and what is over the size limit, with a catchable error', async () => {
    const fn = await post(server, { bad: 'function' });
    assert.equal(fn.status, 503);
    assert.equal(fn.body.code, 'queue_message_unserialisable');
    assert.match(String(fn.body.message), /cannot be stored on a queue/);
    const circular = await post(server, { bad: 'circular' });
    assert.equal(circular.status, 503);
    assert.equal(circular.body.code, 'queue_message_unserialisable');
    const big = await post(server, { big: 2 * 1024 * 1024 });
    assert.equal(big.status, 503);
    assert.equal(big.body.code, 'queue_message_too_large');
    assert.match(String(big.body.message), /over the queue's limit/);
  });

  it('fails every message of a queue out without a queue name, catchably', async () => {
    const res = await request(server.at('unnamed'), { method: 'POST', json: { order: 1 } });
    assert.equal(res.status, 503);
    assert.equal(res.body.code, 'queue_name_invalid');
    assert.match(String(res.body.message), /the queue has no name/);
  });

  it("fails a message at the queue's bound, catchably, instead of growing without limit", async () => {
    const before = (await request(server.at('queues'), { token })).body.queues.find((q: { name: string }) => q.name === 'orders').depth;
    const answers = [];
    for (let i = before; i < 7; i++) answers.push((await post(server, { order: i })).status);
    assert.deepEqual(answers.slice(0, 5 - before), Array(5 - before).fill(202));
    assert.ok(answers.slice(5 - before).every((s) => s === 503), `${answers}`);
    const full = await post(server, { order: 'over' });
    assert.equal(full.body.code, 'queue_full');
  });

  it('acknowledges a message when the flow after queue in finished it; keeps a stable id; purges on request', async () => {
    put({ n: 1 });
    const [m] = await capture.waitFor('done', 1);
    assert.equal(m.redelivered, false);
    assert.equal(m.attempts, 1);
    assert.equal(typeof m._msgid, 'string');
    await eventually(async () => {
      const work = (await request(server.at('queues'), { token })).body.queues.find((q: { name: string }) => q.name === 'work');
      assert.equal(work.depth, 0, 'acknowledged and removed');
      assert.equal(work.consumers, 1);
      return true;
    });
    const purge = await request(server.at('queues/orders/messages'), { method: 'DELETE', token });
    assert.equal(purge.status, 200);
    assert.ok(purge.body.purged >= 1);
  });

  it('tries a failed message again as a redelivery, then sends it to the dead-letter output', async () => {
    capture.messages.clear();
    put({ n: 'retried', fail: 1 }, 'r');
    put({ n: 'dead', fail: 9 }, 'd');
    const [retried] = await capture.waitFor('done', 1);
    assert.equal(retried.payload.n, 'retried');
    assert.equal(retried.redelivered, true);
    assert.equal(retried.attempts, 2);
    const [dead] = await capture.waitFor('dead', 1);
    assert.equal(dead.payload.n, 'dead');
    assert.equal(dead.attempts, 3, 'maxAttempts 2: the third claim goes to the dead letters');
    const work = (await request(server.at('queues'), { token })).body.queues.find((q: { name: string }) => q.name === 'work');
    assert.equal(work.deadLetters, 1);
  });

  it('handles messages of one key one at a time, in order, while other keys run beside them', async () => {
    capture.messages.clear();
    // Earlier messages of a key take longer: without the key they would finish out of order.
    for (let i = 0; i < 6; i++) put({ n: i, wait: (6 - i) * 15 }, i % 2 ? 'odd' : 'even');
    const got = await capture.waitFor('done', 6);
    const order = (key: string) => got.filter((m) => m.topic === key).map((m) => m.payload.n);
    assert.deepEqual(order('even'), [0, 2, 4]);
    assert.deepEqual(order('odd'), [1, 3, 5]);
  });

  it('holds no message back for another of its topic when Order by is left empty', async () => {
    const node = server.instance.runtime.services.nodes.get('fq')!;
    node.receive({ payload: { n: 'slow', wait: 300 }, topic: 'same' });
    node.receive({ payload: { n: 'quick', wait: 0 }, topic: 'same' });
    const got = await capture.waitFor('fdone', 2);
    assert.deepEqual(got.map((m) => m.payload.n), ['quick', 'slow']);
  });

  it('answers bad admin requests with a clear 4xx', async () => {
    const unknown = await request(server.at('queues/nope/messages'), { method: 'DELETE', token });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'not_found');
    const long = await request(server.at(`queues/${'q'.repeat(101)}/messages`), { method: 'DELETE', token });
    assert.equal(long.status, 400);
    assert.equal(long.body.code, 'invalid_request');
    assert.match(long.body.message, /longer than 100/);
    const control = await request(server.at('queues/a%01b/messages'), { method: 'DELETE', token });
    assert.equal(control.status, 400);
    assert.match(control.body.message, /control character/);
    const reader = await login(server, 'reader', READER_PASSWORD, 'read');
    assert.equal((await request(server.at('queues'), { token: reader })).status, 200, 'queues.read is a read permission');
    assert.equal((await request(server.at('queues/work/messages'), { method: 'DELETE', token: reader })).status, 401);
    assert.equal((await request(server.at('queues'))).status, 401);
  });

  it('exports the queues in GET /metrics', async () => {
    const text = await (await fetch(server.at('metrics'))).text();
    assert.match(text, /^runnel_queue_depth\{queue="work"\} 0$/m);
    assert.match(text, /^runnel_queue_dead_letters\{queue="work"\} 1$/m);
    assert.match(text, /^runnel_queue_in_flight\{queue="orders"\} 0$/m);
  });

  it('the editor gets the queue nodes with the core nodes', async () => {
    const res = await fetch(server.at('nodes'), { headers: { accept: 'text/html', authorization: `Bearer ${token}` } });
    const html = await res.text();
    for (const type of ['queue out', 'queue in']) {
      assert.match(html, new RegExp(`registerQueueNode\\("${type}"`));
      assert.match(html, new RegExp(`data-template-name="${type}">\\s*<div class="form-row">\\s*<label for="node-input-queue"`), `${type}'s dialog starts with its queue`);
      assert.match(html, new RegExp(`data-help-name="${type}"`));
    }
  });

  it('keeps messages that did not come from a queue in on the hook-free path while one runs', async () => {
    const hooks = server.instance.runtime.services.hooks;
    const triggered: string[] = [];
    const trigger = hooks.trigger;
    hooks.trigger = ((name: string, ...rest: unknown[]) => {
      triggered.push(name);
      return (trigger as (...a: unknown[]) => unknown).call(hooks, name, ...rest);
    }) as typeof hooks.trigger;
    try {
      capture.messages.clear();
      // The nodes after queue in, reached by a message that never was on the queue.
      server.instance.runtime.services.nodes.get('slow')!.receive({ payload: { n: 'direct' } });
      await capture.waitFor('done', 1);
      assert.equal(triggered.length, 0, `no hook ran for it: ${triggered.join(', ')}`);
      put({ n: 'queued' });
      await capture.waitFor('done', 2);
      assert.ok(triggered.includes('preDeliver') && triggered.includes('onComplete'), 'a message from queue in is followed');
    } finally {
      hooks.trigger = trigger;
    }
  });

  it('leaves the message path hook-free once no queue in node runs', async () => {
    const hooks = server.instance.runtime.services.hooks;
    assert.ok(hooks.has('onComplete.runnel-queue-in'), 'a queue in follows completions');
    await deploy(server, FLOWS.filter((c) => c.type !== 'queue in'), { token });
    assert.equal(hooks.anyMessageHook, false);
  });
});

describe("the README's order intake", { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ queues: { pollMs: 20, backoffMs: 20 } });
  });
  after(() => server?.dispose());

  it('deploys as printed, answers 202 once an order is stored, 503 with the code otherwise, and processes the order', async () => {
    const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
    const example = readme.indexOf('**A worked example: an order intake.**');
    const json = /```json\n([\s\S]*?)\n```/.exec(readme.slice(example));
    assert.ok(example > 0 && json, 'the README has the flow');
    const flows = JSON.parse(json[1]) as Conf[];
    const capture = installCapture(server);
    // The debug nodes become capture nodes: what they would show is what the test reads.
    await deploy(server, flows.map((c) => (c.type === 'debug' ? { ...c, type: 'test-capture' } : c)));
    const accepted = await post(server, { customer: 'c1', items: [{ price: 2, qty: 3 }] });
    assert.deepEqual([accepted.status, accepted.body], [202, { accepted: true }]);
    const [processed] = await capture.waitFor('processed', 1);
    assert.equal(processed.payload.total, 6);
    const big = await post(server, { customer: 'c1', items: 'x'.repeat(2 * 1024 * 1024) });
    assert.deepEqual([big.status, big.body.code], [503, 'queue_message_too_large']);
    await post(server, { customer: 'c2' });
    const [dead] = await capture.waitFor('needs a person', 1);
    assert.deepEqual([dead.payload.customer, dead.attempts], ['c2', 6], 'five failed attempts, then the dead letters');
  });
});
