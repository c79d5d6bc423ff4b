/**
 * http-in requests across deploys (httpNodeRouteWait): a request for a route being replaced waits
 * for the new flow and is served by it, a request already in the old flow finishes there, a route
 * the new flows lack still answers 404, and the wait is bounded.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { deploy, type Conf } from '../helpers/deploy.js';
import { installCapture } from '../helpers/capture.js';
import { createRedApi } from '../../src/runtime/red-api/red-api.js';
import type { Node, NodeConfig } from '../../src/runtime/flows/node.js';

const tab = { id: 't1', type: 'tab', label: 'routes' };
const at = { z: 't1', x: 100, y: 100 };
const httpIn = (id: string, url: string, wires: string[], extra: Conf = {}): Conf => ({ id, type: 'http in', url, method: 'get', wires: [wires], ...at, ...extra });
const answer = (id: string, func: string, wires = ['out']): Conf => ({ id, type: 'function', func, outputs: 1, wires: [wires], ...at });
const out: Conf = { id: 'out', type: 'http response', wires: [], ...at };

/** A function that answers after `ms`, as a flow calling a backend does. */
const later = (payload: string, ms: number) => `setTimeout(() => { msg.payload = ${JSON.stringify(payload)}; node.send(msg); }, ${ms}); return null;`;

/**
 * Registers `test-hold`: a node whose close takes a few event-loop turns, as closing a connection
 * does, or, once armed, waits until the test releases it, so a deploy can be held between stopping
 * the old flow and starting the new one.
 */
function installHold(server: TestServer): { closing: () => boolean; arm: () => void; release: () => void } {
  const runtime = server.instance.runtime;
  if (!runtime.registry.modules.has('test-helpers')) runtime.registry.addModule({ name: 'test-helpers', version: '1.0.0', builtin: false });
  const RED = createRedApi(runtime, runtime.registry.addSet('test-helpers', 'hold'));
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  let closing = false;
  function HoldNode(this: Node, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    this.on('close', (done: () => void) => {
      closing = true;
      void (gate ?? new Promise((resolve) => setTimeout(resolve, 20))).then(() => {
        closing = false;
        done();
      });
    });
  }
  RED.nodes.registerType('test-hold', HoldNode as never);
  return {
    closing: () => closing,
    arm: () => {
      gate = new Promise((resolve) => (open = resolve));
    },
    release: () => {
      gate = undefined;
      open?.();
    },
  };
}

interface Answer {
  status: number;
  body: string;
}

/** Sends a request and resolves once it is written to the socket, with a promise for its answer. */
function send(url: string, init: { method?: string; body?: string; type?: string } = {}): Promise<{ answered: Promise<Answer> }> {
  return new Promise((sent, fail) => {
    const headers: Record<string, string> = {};
    if (init.body !== undefined) {
      headers['content-type'] = init.type ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(init.body));
    }
    const answered = new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(url, { method: init.method ?? 'GET', headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', (e) => {
        reject(e);
        fail(e);
      });
      req.on('finish', () => sent({ answered }));
      req.end(init.body);
    });
  });
}

const routed = (server: TestServer, path: string) => server.instance.runtime.httpNode._router.stack.some((layer) => layer.route?.path === path);

describe('http-in routes across deploys', { timeout: 180_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    installHold(server);
  });
  after(() => server.dispose());

  it('loses no request under concurrent load during 20 full deploys that replace the flow', async () => {
    // The slow-closing node keeps the route away for a while in every deploy.
    const version = (v: number) => [tab, httpIn('in', '/work', ['fn']), answer('fn', later(`v${v}`, 5)), out, { id: 'slow', type: 'test-hold', wires: [], ...at }];
    await deploy(server, version(0));
    const statuses = new Map<number, number>();
    const bodies = new Set<string>();
    let deploying = true;
    const client = async () => {
      while (deploying) {
        const r = await request(server.at('work'), { signal: AbortSignal.timeout(60_000) });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        bodies.add(r.text);
      }
    };
    const clients = Array.from({ length: 8 }, client);
    // Each deploy starts while requests are in the old flow or on their way in.
    await eventually(() => (statuses.get(200) ?? 0) > 0, 30_000);
    for (let v = 1; v <= 20; v++) await deploy(server, version(v), { type: 'full' });
    deploying = false;
    await Promise.all(clients);
    assert.deepEqual([...statuses.keys()], [200], `answers by status: ${JSON.stringify([...statuses])}`);
    for (const body of bodies) assert.match(body, /^v\d+$/);
    assert.equal((await request(server.at('work'))).text, 'v20');
  });

  it('a request already in the old flow is answered by the old flow', async () => {
    const capture = installCapture(server);
    const flows = (payload: string) => [tab, httpIn('in', '/inside', ['fn', 'entered']), answer('fn', later(payload, 300)), { id: 'entered', type: 'test-capture', name: 'entered', wires: [], ...at }, out];
    await deploy(server, flows('old'));
    const pending = request(server.at('inside'));
    await capture.waitFor('entered', 1, 30_000);
    await deploy(server, flows('new'), { type: 'full' });
    const answered = await pending;
    assert.equal(answered.status, 200);
    assert.equal(answered.text, 'old');
    assert.equal((await request(server.at('inside'))).text, 'new');
  });

  it('a route the new flows no longer have answers 404 after the deploy', async () => {
    await deploy(server, [tab, httpIn('in', '/kept', ['fn']), answer('fn', 'msg.payload = "kept"; return msg;'), out]);
    assert.equal((await request(server.at('work'))).status, 404);
    assert.equal((await request(server.at('kept'))).text, 'kept');
  });
});

describe('http-in routes while a deploy is held between stop and start', { timeout: 120_000 }, () => {
  let server: TestServer;
  let hold: ReturnType<typeof installHold>;
  before(async () => {
    server = await startServer({ httpNodeRouteWait: 3000 });
    hold = installHold(server);
  });
  after(() => server.dispose());

  it('waits for the route, is served from its raw body by the new route, gets 404 for a route that is gone, and 503 route_pending at the bound', async () => {
    const holdNode = { id: 'hold', type: 'test-hold', wires: [], ...at };
    await deploy(server, [tab, httpIn('in', '/work', ['fn']), answer('fn', 'msg.payload = "old"; return msg;'), out, holdNode]);
    hold.arm();
    const next = [
      tab,
      httpIn('in', '/work', ['fn']),
      answer('fn', 'msg.payload = "new"; return msg;'),
      // A POST route reading the raw body: a request read while it was gone still gets its Buffer.
      httpIn('raw', '/raw', ['kind'], { method: 'post', skipBodyParsing: true }),
      answer('kind', 'msg.payload = Buffer.isBuffer(msg.payload) ? "buffer " + msg.payload.toString() : typeof msg.payload; return msg;'),
      out,
      holdNode,
    ];
    const deploying = deploy(server, next, { type: 'full' });
    await eventually(() => hold.closing() && !routed(server, '/work'), 30_000);

    const bounded = await (await send(server.at('work'))).answered;
    assert.equal(bounded.status, 503);
    assert.deepEqual(Object.keys(JSON.parse(bounded.body) as object).sort(), ['code', 'message']);
    assert.equal((JSON.parse(bounded.body) as { code: string }).code, 'route_pending');

    const work = await send(server.at('work'));
    const raw = await send(server.at('raw'), { method: 'POST', body: '{"a":1}' });
    const gone = await send(server.at('gone'));
    hold.release();
    await deploying;
    assert.deepEqual(await work.answered, { status: 200, body: 'new' });
    assert.deepEqual(await raw.answered, { status: 200, body: 'buffer {"a":1}' });
    assert.equal((await gone.answered).status, 404);
  });
});
