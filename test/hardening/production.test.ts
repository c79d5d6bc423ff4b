import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { login, request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { hashToken } from '../../src/auth/tokens.js';
import { send, tokenRequest } from './support.js';
import { adminAuth } from '../helpers/users.js';
import { deploy } from '../helpers/deploy.js';

/** What production needs around the API: security headers, CORS, request ids, graceful shutdown. */

describe('security headers, CORS off by default, request ids', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startServer({ adminAuth: adminAuth() });
    token = await login(server);
  });
  after(() => server.dispose());

  test('admin answers, successes and failures alike, are nosniff and uncacheable, with a request id', async () => {
    const answers = [
      await request(server.at('flows'), { token }),
      await request(server.at('settings'), { token }),
      await request(server.at('flows')),
      await request(server.at('flows'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[', token }),
      await request(server.at('nodes/nope'), { token }),
      await request(server.at('auth/login')),
    ];
    const ids = new Set<string>();
    for (const res of answers) {
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', res.text);
      assert.equal(res.headers.get('cache-control'), 'no-store', res.text);
      const id = res.headers.get('x-request-id') ?? '';
      assert.match(id, /^[0-9a-f-]{36}$/);
      ids.add(id);
    }
    assert.equal(ids.size, answers.length, 'request ids are unique');
  });

  test('without httpAdminCors no cross-origin header is sent and preflights are not answered', async () => {
    const get = await request(server.at('flows'), { token, headers: { origin: 'https://evil.example' } });
    assert.equal(get.headers.get('access-control-allow-origin'), null);
    const preflight = await request(server.at('flows'), { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.notEqual(preflight.status, 204);
  });

  test('audit lines carry the id of the request that caused them', async () => {
    const mark = server.logs.length;
    const res = await tokenRequest(server.at, 'admin', 'wrong-password');
    const line = server.logs.slice(mark).map((l) => JSON.parse(l)).find((l) => l.event === 'auth.login.fail');
    assert.equal(line?.reqId, res.headers['x-request-id']);
  });
});

describe('configured CORS', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ httpAdminCors: { origin: ['https://ui.example'], credentials: true } });
  });
  after(() => server.dispose());

  test('an allowed origin gets its own origin back, credentials and a preflight answer', async () => {
    const preflight = await request(server.at('flows'), { method: 'OPTIONS', headers: { origin: 'https://ui.example', 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://ui.example');
    assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    const get = await request(server.at('flows'), { headers: { origin: 'https://ui.example' } });
    assert.equal(get.headers.get('access-control-allow-origin'), 'https://ui.example');
    assert.match(String(get.headers.get('vary')), /^Origin(,|$)/);
  });

  test('another origin gets no cross-origin headers', async () => {
    const get = await request(server.at('flows'), { headers: { origin: 'https://evil.example' } });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('access-control-allow-origin'), null);
    assert.equal(get.headers.get('access-control-allow-credentials'), null);
  });
});

test('graceful shutdown under load: in-flight requests complete, nodes close, storage is flushed', { timeout: 30_000 }, async () => {
  const server = await startServer({ adminAuth: adminAuth() });
  const capture = installCapture(server);
  try {
    const token = await login(server);
    const flows = [
      { id: 't', type: 'tab' },
      { id: 'in', type: 'http in', z: 't', url: '/slow', method: 'get', x: 1, y: 1, wires: [['fn']] },
      { id: 'fn', type: 'function', z: 't', func: 'setTimeout(() => node.send(msg), 300); return null;', outputs: 1, x: 2, y: 1, wires: [['out']] },
      { id: 'out', type: 'http response', z: 't', x: 3, y: 1, wires: [] },
      { id: 'cap', type: 'test-capture', z: 't', x: 4, y: 1, wires: [] },
    ];
    await deploy(server, flows, { token });
    const slow = new URL('slow', server.url).href;
    const inFlight = Array.from({ length: 20 }, () => send(slow, { timeoutMs: 10_000 }));
    const lastLogin = await login(server);
    await new Promise((r) => setTimeout(r, 100));
    await server.stop();
    const answers = await Promise.all(inFlight);
    assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
    assert.deepEqual(capture.closes.get('cap'), [{ removed: false }]);
    const sessions = await readFile(path.join(server.userDir, '.sessions.json'), 'utf8');
    assert.ok(sessions.includes(hashToken(lastLogin)), 'the last session was flushed');
    assert.deepEqual(JSON.parse(await readFile(path.join(server.userDir, 'flows.json'), 'utf8')), flows);
    await assert.rejects(send(slow, { timeoutMs: 2000 }), 'the server no longer accepts requests');
  } finally {
    await server.dispose();
  }
});
