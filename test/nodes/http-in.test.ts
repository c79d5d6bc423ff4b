import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { request, eventually } from '../helpers/server.js';
import { type Conf, flowSuite } from './flow.js';
import { deploy } from '../helpers/deploy.js';

const node = (id: string, type: string, extra: Conf = {}, wires: string[] = []): Conf => ({
  id, type, z: 't1', x: 100, y: 100, wires: [wires], ...extra,
});
const fn = (id: string, body: string, next: string) => node(id, 'function', { func: body, outputs: 1 }, [next]);

/** Every http-in route of the suite, each answered through a function node or directly. */
function flows(): Conf[] {
  return [
    { id: 't1', type: 'tab', label: 'http' },
    node('in-hello', 'http in', { method: 'get', url: '/hello/:name' }, ['fn-hello']),
    fn('fn-hello', 'msg.payload = { name: msg.req.params.name, query: msg.payload, header: msg.req.headers["x-test"] }; return msg;', 'out'),
    node('in-echo', 'http in', { method: 'post', url: 'echo' }, ['fn-echo']),
    fn('fn-echo', 'msg.payload = { body: msg.payload, type: Buffer.isBuffer(msg.payload) ? "buffer" : typeof msg.payload }; return msg;', 'out'),
    node('in-put', 'http in', { method: 'put', url: '/items/:id' }, ['out']),
    node('in-made', 'http in', { method: 'get', url: '/made' }, ['fn-made']),
    fn('fn-made', [
      'msg.statusCode = 201;',
      'msg.headers = { "x-from-msg": "m", "x-conf": "loses" };',
      'msg.cookies = { session: { value: "abc", httpOnly: true }, gone: null, plain: "p" };',
      'msg.payload = "made";',
      'return msg;',
    ].join('\n'), 'out-conf'),
    node('in-teapot', 'http in', { method: 'get', url: '/teapot' }, ['fn-teapot']),
    fn('fn-teapot', 'msg.statusCode = 200; msg.payload = 42; return msg;', 'out-418'),
    node('in-status-text', 'http in', { method: 'get', url: '/status-text' }, ['fn-status-text']),
    fn('fn-status-text', 'msg.statusCode = "202 Accepted"; msg.payload = "later"; return msg;', 'out'),
    node('in-bin', 'http in', { method: 'get', url: '/bin' }, ['fn-bin']),
    fn('fn-bin', 'msg.payload = Buffer.from([0, 1, 2, 255]); return msg;', 'out'),
    node('in-cookies', 'http in', { method: 'get', url: '/cookies' }, ['fn-cookies']),
    fn('fn-cookies', 'msg.payload = msg.req.cookies; return msg;', 'out'),
    node('in-seen', 'http in', { method: 'delete', url: '/seen' }, ['seen']),
    node('seen', 'test-capture', { name: 'seen', passthrough: true }, ['out']),
    node('out', 'http response', { statusCode: '', headers: {} }),
    node('out-conf', 'http response', { statusCode: '', headers: { 'x-conf': 'node' } }),
    node('out-418', 'http response', { statusCode: '418', headers: {} }),
  ];
}

describe('http in and http response', () => {
  const t = flowSuite(() => flows());

  test('GET: params, query as payload and request headers reach the flow; an object answers as JSON', async () => {
    const r = await request(t.server.at('hello/world?a=1&b=two'), { headers: { 'x-test': 'yes' } });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(r.body, { name: 'world', query: { a: '1', b: 'two' }, header: 'yes' });
  });

  test('POST: a JSON body arrives parsed, a text body as a string, a form as an object', async () => {
    const json = await request(t.server.at('echo'), { method: 'POST', json: { a: [1, 2], b: null } });
    assert.equal(json.status, 200);
    assert.deepEqual(json.body, { body: { a: [1, 2], b: null }, type: 'object' });
    const text = await request(t.server.at('echo'), { method: 'POST', body: 'plain words', headers: { 'content-type': 'text/plain' } });
    assert.deepEqual(text.body, { body: 'plain words', type: 'string' });
    const form = await request(t.server.at('echo'), { method: 'POST', body: 'x=1&y=2', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.deepEqual(form.body, { body: { x: '1', y: '2' }, type: 'object' });
  });

  test('PUT answered directly: the body is the payload and goes back as JSON', async () => {
    const r = await request(t.server.at('items/7'), { method: 'PUT', json: { id: 7 } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { id: 7 });
  });

  test('status from msg, node headers over msg headers, cookies set and cleared', async () => {
    const r = await request(t.server.at('made'));
    assert.equal(r.status, 201);
    assert.equal(r.text, 'made');
    assert.equal(r.headers.get('x-conf'), 'node');
    assert.equal(r.headers.get('x-from-msg'), 'm');
    const cookies = r.headers.getSetCookie();
    assert.equal(cookies.length, 3, cookies.join(' | '));
    assert.ok(cookies.some((c) => /^session=abc;/.test(c) && /HttpOnly/i.test(c)), cookies.join(' | '));
    assert.ok(cookies.some((c) => /^gone=;/.test(c) && /Expires=Thu, 01 Jan 1970/i.test(c)), cookies.join(' | '));
    assert.ok(cookies.some((c) => /^plain=p;/.test(c)), cookies.join(' | '));
  });

  test('the node status code wins over msg.statusCode; a number payload is sent as text', async () => {
    const r = await request(t.server.at('teapot'));
    assert.equal(r.status, 418);
    assert.equal(r.text, '42');
  });

  test('msg.statusCode is read as parseInt reads it, so "202 Accepted" answers 202', async () => {
    const r = await request(t.server.at('status-text'));
    assert.equal(r.status, 202);
    assert.equal(r.text, 'later');
  });

  test('a Buffer payload is sent as binary', async () => {
    const res = await fetch(t.server.at('bin'), { signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    assert.deepEqual([...new Uint8Array(await res.arrayBuffer())], [0, 1, 2, 255]);
  });

  test('request cookies are parsed into msg.req.cookies', async () => {
    const r = await request(t.server.at('cookies'), { headers: { cookie: 'a=1; b=hello%20there' } });
    assert.deepEqual(r.body, { a: '1', b: 'hello there' });
  });

  test('msg.req is the request and msg.res wraps the response as _res', async () => {
    const r = await request(t.server.at('seen?x=1'), { method: 'DELETE' });
    assert.equal(r.status, 200);
    const [msg] = await t.capture.waitFor('seen');
    assert.equal(msg.req.method, 'DELETE');
    assert.equal(msg.req.query.x, '1');
    assert.equal(typeof msg.res._res.setHeader, 'function');
    assert.deepEqual(Object.keys(msg.res), ['_res']);
    assert.match(msg._msgid, /^[0-9a-f]{16}$/);
  });

  test('a response node without msg.res warns', async () => {
    const out = t.server.instance.runtime.services.nodes.get('out');
    assert.ok(out);
    out.receive({ payload: 'orphan' });
    await eventually(() => t.server.logs.some((line) => line.includes('No response object')));
  });

  test('redeploying without an http in node removes its route', async () => {
    assert.equal((await request(t.server.at('hello/again'))).status, 200);
    await deploy(t.server, flows().filter((n) => n.id !== 'in-hello'));
    const gone = await request(t.server.at('hello/again'));
    assert.equal(gone.status, 404);
    assert.equal((await request(t.server.at('teapot'))).status, 418, 'other routes stay');
    await deploy(t.server, flows());
    assert.equal((await request(t.server.at('hello/back'))).status, 200);
  });
});
