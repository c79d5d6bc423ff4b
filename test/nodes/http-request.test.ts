import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { eventually } from '../helpers/server.js';
import { refusedPort } from '../helpers/ports.js';
import type { Msg } from '../../src/runtime/flows/node.js';
import { type Conf, flowSuite } from './flow.js';

const USER = 'alice';
const PASSWORD = 'secret "pw"';
const TOKEN = 'token-123';
const REALM = 'runnel-test';
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

function parseDigest(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of header.replace(/^Digest\s+/i, '').matchAll(/(\w+)=(?:"([^"]*)"|([^\s,]+))/g)) out[m[1]] = m[2] ?? m[3];
  return out;
}

/** The remote server the http request nodes talk to. */
function startTarget(): Promise<http.Server> {
  const nonce = randomBytes(8).toString('hex');
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const auth = req.headers.authorization ?? '';
      const reply = (status: number, text: string, headers: Record<string, string | string[]> = {}) => {
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(text);
      };
      const path = (req.url ?? '').split('?')[0];
      switch (path) {
        case '/text':
          return reply(200, 'hello', { 'set-cookie': ['k=v%201; Path=/'] });
        case '/json':
          return reply(200, '{"a":[1,2]}', { 'content-type': 'application/json' });
        case '/echo':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
        case '/redirect':
          return reply(302, '', { location: '/text' });
        case '/slow':
          return; // never answers
        case '/missing':
          return reply(404, 'nope');
        case '/basic':
          return auth === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` ? reply(200, 'basic ok') : reply(401, 'no');
        case '/bearer':
          return auth === `Bearer ${TOKEN}` ? reply(200, 'bearer ok') : reply(401, 'no');
        case '/digest': {
          const d = parseDigest(auth);
          if (d.nonce === nonce && d.realm === REALM && d.username === USER && d.uri === req.url) {
            const ha1 = md5(`${USER}:${REALM}:${PASSWORD}`);
            const ha2 = md5(`${req.method}:${d.uri}`);
            if (d.response === md5(`${ha1}:${nonce}:${d.nc}:${d.cnonce}:${d.qop}:${ha2}`) && d.opaque === 'opq') {
              return reply(200, 'digest ok');
            }
          }
          return reply(401, 'challenge', { 'www-authenticate': `Digest realm="${REALM}", qop="auth", nonce="${nonce}", opaque="opq", algorithm=MD5` });
        }
        default:
          return reply(500, 'unexpected');
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('http request', () => {
  let target: http.Server;
  let base: string;
  let refused: number;
  /** Sends msg through request node `id` and returns what its t.capture node got. */
  const call = async (id: string, msg: Msg = {}) => {
    const seen = t.capture.of(id).length;
    receive(`req-${id}`, msg);
    const list = await t.capture.waitFor(id, seen + 1);
    return list[seen];
  };

  before(async () => {
    target = await startTarget();
    base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    refused = await refusedPort();
  });
  const t = flowSuite(() => {
    const req = (id: string, extra: Conf): Conf[] => [
      { id: `req-${id}`, type: 'http request', z: 't1', x: 1, y: 1, wires: [[id]], method: 'GET', ret: 'txt', paytoqs: 'ignore', url: '', ...extra },
      { id, type: 'test-capture', name: id, z: 't1', x: 1, y: 1, wires: [] },
    ];
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'requests' },
      ...req('txt', { url: `${base}/text` }),
      ...req('bin', { url: `${base}/text`, ret: 'bin' }),
      ...req('obj', { url: `${base}/json`, ret: 'obj' }),
      ...req('objbad', { url: `${base}/text`, ret: 'obj' }),
      ...req('msgurl', { ret: 'obj' }),
      ...req('template', { url: `${base}/echo?topic={{topic}}`, ret: 'obj' }),
      ...req('query', { url: `${base}/echo`, ret: 'obj', paytoqs: 'query' }),
      ...req('post', {
        url: `${base}/echo`, method: 'POST', ret: 'obj',
        headers: [
          { keyType: 'other', keyValue: 'X-Custom', valueType: 'other', valueValue: 'custom' },
          { keyType: 'other', keyValue: 'X-From-Msg', valueType: 'msg', valueValue: 'topic' },
          { keyType: 'other', keyValue: 'X-Drop', valueType: 'other', valueValue: '' },
        ],
      }),
      ...req('use', { url: `${base}/echo`, method: 'use', ret: 'obj' }),
      ...req('redirect', { url: `${base}/redirect` }),
      ...req('basic', { url: `${base}/basic`, authType: 'basic', credentials: { user: USER, password: PASSWORD } }),
      ...req('bearer', { url: `${base}/bearer`, authType: 'bearer', credentials: { password: TOKEN } }),
      ...req('digest', { url: `${base}/digest?x=1`, authType: 'digest', credentials: { user: USER, password: PASSWORD } }),
      ...req('digestbad', { url: `${base}/digest`, authType: 'digest', credentials: { user: USER, password: 'wrong' } }),
      ...req('missing', { url: `${base}/missing` }),
      ...req('senderr', { url: `${base}/missing`, senderr: true }),
      ...req('slow', { url: `${base}/slow` }),
      ...req('refused', { url: `http://127.0.0.1:${refused}/nothing` }),
      { id: 'catch', type: 'catch', z: 't1', x: 1, y: 1, scope: ['req-refused', 'req-senderr', 'req-slow'], wires: [['caught']] },
      { id: 'caught', type: 'test-capture', name: 'caught', z: 't1', x: 1, y: 1, wires: [] },
    ];
    return flows;
  });
  const { receive } = t;
  after(async () => {
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
  });

  test('ret txt: the body as a string, with status, headers, cookies and the final url', async () => {
    const msg = await call('txt', { payload: 'ignored for GET' });
    assert.equal(msg.payload, 'hello');
    assert.equal(msg.statusCode, 200);
    assert.equal(msg.headers['content-type'], 'text/plain');
    assert.equal(typeof msg.headers['x-node-red-request-node'], 'string');
    assert.deepEqual(msg.responseCookies, { k: { Path: '/', value: 'v 1' } });
    assert.equal(msg.responseUrl, `${base}/text`);
    assert.deepEqual(msg.redirectList, []);
  });

  test('ret bin gives a Buffer; ret obj parses JSON and falls back to text with a warning', async () => {
    const bin = await call('bin');
    assert.ok(Buffer.isBuffer(bin.payload));
    assert.equal(bin.payload.toString(), 'hello');
    assert.deepEqual((await call('obj')).payload, { a: [1, 2] });
    assert.equal((await call('objbad')).payload, 'hello');
    await eventually(() => t.server.logs.some((line) => line.includes('JSON parse error')));
  });

  test('the url comes from msg.url when the node has none, or from a mustache template', async () => {
    const viaMsg = await call('msgurl', { url: `${base}/echo?from=msg` });
    assert.equal(viaMsg.payload.url, '/echo?from=msg');
    const templated = await call('template', { topic: 'abc' });
    assert.equal(templated.payload.url, '/echo?topic=abc');
  });

  test('paytoqs query appends an object payload to the query string of a GET', async () => {
    const msg = await call('query', { payload: { q: 'a b', n: 2 } });
    assert.equal(msg.payload.method, 'GET');
    assert.equal(msg.payload.url, '/echo?q=a%20b&n=2');
    assert.equal(msg.payload.body, '');
  });

  test('POST sends an object payload as JSON with node headers, msg headers and cookies', async () => {
    const msg = await call('post', { payload: { hello: 'world' }, topic: 'tp', headers: { 'X-Msg': 'm', 'x-drop': 'gone' }, cookies: { c1: 'x y', c2: { value: 'raw', encode: false } } });
    const echoed = msg.payload;
    assert.equal(echoed.method, 'POST');
    assert.equal(echoed.body, '{"hello":"world"}');
    assert.equal(echoed.headers['content-type'], 'application/json');
    assert.equal(echoed.headers['content-length'], '17');
    assert.equal(echoed.headers['x-custom'], 'custom');
    assert.equal(echoed.headers['x-from-msg'], 'tp');
    assert.equal(echoed.headers['x-msg'], 'm');
    assert.equal(echoed.headers['x-drop'], undefined, 'a node rule with an empty value removes the header');
    assert.equal(echoed.headers.cookie, 'c1=x%20y; c2=raw');
  });

  test('method "use" takes msg.method; a string payload is sent as it is', async () => {
    const msg = await call('use', { method: 'put', payload: 'text body' });
    assert.equal(msg.payload.method, 'PUT');
    assert.equal(msg.payload.body, 'text body');
  });

  test('headers of an earlier response are not sent again', async () => {
    const first = await call('txt');
    const msg = await call('msgurl', { url: `${base}/echo`, headers: first.headers });
    assert.equal(msg.payload.headers['set-cookie'], undefined);
    assert.equal(msg.payload.headers['x-node-red-request-node'], undefined);
  });

  test('redirects are followed and listed', async () => {
    const msg = await call('redirect');
    assert.equal(msg.payload, 'hello');
    assert.equal(msg.statusCode, 200);
    assert.equal(msg.responseUrl, `${base}/text`);
    assert.deepEqual(msg.redirectList, [{ location: '/text' }]);
  });

  test('basic, bearer and digest authentication use the node credentials', async () => {
    const basic = await call('basic');
    assert.deepEqual([basic.statusCode, basic.payload], [200, 'basic ok']);
    const bearer = await call('bearer');
    assert.deepEqual([bearer.statusCode, bearer.payload], [200, 'bearer ok']);
    const digest = await call('digest');
    assert.deepEqual([digest.statusCode, digest.payload], [200, 'digest ok']);
    const wrong = await call('digestbad');
    assert.deepEqual([wrong.statusCode, wrong.payload], [401, 'challenge']);
  });

  test('a non-2xx answer is an ordinary output, with senderr too (Node-RED 4 never throws on status)', async () => {
    const missing = await call('missing');
    assert.deepEqual([missing.statusCode, missing.payload, missing.retry], [404, 'nope', 0]);
    const viaSenderr = await call('senderr', { payload: 'x' });
    assert.deepEqual([viaSenderr.statusCode, viaSenderr.payload], [404, 'nope']);
  });

  test('a refused connection goes to catch and still produces an output', async () => {
    const msg = await call('refused', { payload: 'p' });
    assert.equal(msg.statusCode, 'ECONNREFUSED');
    assert.match(msg.payload, /^RequestError: connect ECONNREFUSED 127\.0\.0\.1:\d+ : http:\/\/127\.0\.0\.1:\d+\/nothing$/);
    const [caught] = await t.capture.waitFor('caught');
    assert.match(caught.error.message, /^RequestError: connect ECONNREFUSED/);
    assert.equal(caught.error.code, 'ECONNREFUSED');
    assert.equal(caught.error.source.id, 'req-refused');
  });

  test('msg.requestTimeout bounds the request: no response is an error and an output', async () => {
    const msg = await call('slow', { payload: 'p', requestTimeout: 150 });
    assert.equal(msg.statusCode, 'ETIMEDOUT');
    assert.equal(msg.payload, `TimeoutError: Timeout awaiting 'request' for 150ms : ${base}/slow`);
    const caught = await t.capture.waitFor('caught', 2);
    const timeout = caught.find((m) => m.error.source.id === 'req-slow');
    assert.ok(timeout);
    assert.equal(timeout.error.message, 'No response from server');
  });
});
