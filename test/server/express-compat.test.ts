import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpNode, type HttpNodeServer } from './http-node-harness.js';
import { request } from '../helpers/server.js';

describe('Express response API', () => {
  let s: HttpNodeServer;
  before(async () => {
    s = await startHttpNode();
  });
  after(() => s.close());

  test('res.send with a string is text/html with a length', async () => {
    s.app.get('/send-string', (_req, res: any) => res.send('héllo'));
    const r = await request(`${s.base}/send-string`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(r.headers.get('content-length'), '6');
    assert.equal(r.text, 'héllo');
  });

  test('res.send with an object or an array is JSON; with a Buffer it is octet-stream', async () => {
    s.app.get('/send-object', (_req, res: any) => res.send({ a: 1 }));
    s.app.get('/send-buffer', (_req, res: any) => res.send(Buffer.from([1, 2, 3])));
    const obj = await request(`${s.base}/send-object`);
    assert.equal(obj.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(obj.text, '{"a":1}');
    const buf = await request(`${s.base}/send-buffer`);
    assert.equal(buf.headers.get('content-type'), 'application/octet-stream');
    assert.equal(buf.headers.get('content-length'), '3');
  });

  test('res.send(number) is the legacy status form; res.status(..).send keeps a set Content-Type', async () => {
    s.app.get('/send-number', (_req, res: any) => res.send(404));
    s.app.get('/typed', (_req, res: any) => res.status(201).set('Content-Type', 'text/plain').send('made'));
    const legacy = await request(`${s.base}/send-number`);
    assert.equal(legacy.status, 404);
    assert.equal(legacy.text, 'Not Found');
    assert.equal(legacy.headers.get('content-type'), 'text/plain; charset=utf-8');
    const typed = await request(`${s.base}/typed`);
    assert.equal(typed.status, 201);
    assert.equal(typed.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(typed.text, 'made');
  });

  test('res.sendStatus sends the status text', async () => {
    s.app.get('/status/:n', (req: any, res: any) => res.sendStatus(Number(req.params.n)));
    const ok = await request(`${s.base}/status/200`);
    assert.equal(ok.text, 'OK');
    assert.equal(ok.headers.get('content-type'), 'text/plain; charset=utf-8');
    const nf = await request(`${s.base}/status/404`);
    assert.equal(nf.status, 404);
    assert.equal(nf.text, 'Not Found');
  });

  test('res.json, res.set(object), res.append, res.get and res.type', async () => {
    s.app.get('/json', (_req, res: any) => {
      res.set({ 'X-One': '1', 'X-Num': 2 });
      res.append('X-List', 'a');
      res.append('X-List', ['b', 'c']);
      res.json({ list: res.get('X-List'), one: res.get('x-one') });
    });
    s.app.get('/type', (_req, res: any) => res.type('json').send('{"raw":true}'));
    const r = await request(`${s.base}/json`);
    assert.equal(r.headers.get('x-one'), '1');
    assert.equal(r.headers.get('x-num'), '2');
    assert.equal(r.headers.get('x-list'), 'a, b, c');
    assert.deepEqual(r.body, { list: ['a', 'b', 'c'], one: '1' });
    const t = await request(`${s.base}/type`);
    assert.equal(t.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(t.text, '{"raw":true}');
  });

  test('res.jsonp wraps the body when a callback is given', async () => {
    s.app.get('/jsonp', (_req, res: any) => res.jsonp({ v: 1 }));
    const plain = await request(`${s.base}/jsonp`);
    assert.equal(plain.text, '{"v":1}');
    const wrapped = await request(`${s.base}/jsonp?callback=cb`);
    assert.equal(wrapped.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(wrapped.text, `/**/ typeof cb === 'function' && cb({"v":1});`);
  });

  test('res.redirect defaults to 302 with a text body; a status can be given first', async () => {
    s.app.get('/go', (_req, res: any) => res.redirect('/target path'));
    s.app.get('/go301', (_req, res: any) => res.redirect(301, 'http://example.test/x'));
    const r = await request(`${s.base}/go`, { redirect: 'manual' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.get('location'), '/target%20path');
    assert.equal(r.text, 'Found. Redirecting to /target%20path');
    const html = await request(`${s.base}/go301`, { redirect: 'manual', headers: { accept: 'text/html' } });
    assert.equal(html.status, 301);
    assert.equal(html.text, '<p>Moved Permanently. Redirecting to <a href="http://example.test/x">http://example.test/x</a></p>');
  });

  test('res.cookie and res.clearCookie write Set-Cookie headers', async () => {
    s.app.get('/cookie', (_req, res: any) => {
      res.cookie('a', 'x y', { httpOnly: true, sameSite: 'lax' });
      res.cookie('b', { n: 1 }, { maxAge: 60_000 });
      res.clearCookie('c');
      res.sendStatus(204);
    });
    const r = await request(`${s.base}/cookie`);
    assert.equal(r.status, 204);
    const cookies = r.headers.getSetCookie();
    assert.equal(cookies.length, 3);
    assert.equal(cookies[0], 'a=x%20y; Path=/; HttpOnly; SameSite=Lax');
    assert.match(cookies[1], /^b=j%3A%7B%22n%22%3A1%7D; Max-Age=60; Path=\/; Expires=\w{3}, \d{2} \w{3} \d{4} [\d:]{8} GMT$/);
    assert.equal(cookies[2], 'c=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  });

  test('headersSent reflects the response state', async () => {
    s.app.get('/sent', (_req, res: any) => {
      const before = res.headersSent;
      res.write('x');
      res.end(String(before) + String(res.headersSent));
    });
    assert.equal((await request(`${s.base}/sent`)).text, 'xfalsetrue');
  });
});

describe('Express request API', () => {
  let s: HttpNodeServer;
  before(async () => {
    s = await startHttpNode();
    s.app.all('/req/:id', (req: any, res: any) =>
      res.json({
        params: req.params,
        query: req.query,
        path: req.path,
        url: req.url,
        originalUrl: req.originalUrl,
        method: req.method,
        get: req.get('X-Custom'),
        header: req.header('content-type') ?? null,
        referrer: req.get('Referrer') ?? null,
        hostname: req.hostname,
        protocol: req.protocol,
        secure: req.secure,
        ip: req.ip,
        cookies: req.cookies,
        isJson: req.is('json'),
        isText: req.is('text/*'),
        isAny: req.is(['html', '+json']),
      }),
    );
  });
  after(() => s.close());

  test('a GET exposes params, query, headers, host, cookies and a null is()', async () => {
    const r = await request(`${s.base}/req/a%2Fb?x=1&y=2&y=3`, {
      headers: { 'x-custom': 'yes', referer: 'http://r.test/', cookie: 'sid=abc; j=j%3A%7B%22k%22%3A2%7D; sid=second' },
    });
    assert.deepEqual(r.body, {
      params: { id: 'a/b' },
      query: { x: '1', y: ['2', '3'] },
      path: '/req/a%2Fb',
      url: '/req/a%2Fb?x=1&y=2&y=3',
      originalUrl: '/req/a%2Fb?x=1&y=2&y=3',
      method: 'GET',
      get: 'yes',
      header: null,
      referrer: 'http://r.test/',
      hostname: '127.0.0.1',
      protocol: 'http',
      secure: false,
      ip: '127.0.0.1',
      cookies: { sid: 'abc', j: { k: 2 } },
      isJson: null,
      isText: null,
      isAny: null,
    });
  });

  test('req.is matches the body type with short names, wildcards and suffixes', async () => {
    const json = await request(`${s.base}/req/1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(json.body.isJson, 'json');
    assert.equal(json.body.isText, false);
    assert.equal(json.body.isAny, false);
    const vnd = await request(`${s.base}/req/1`, { method: 'POST', headers: { 'content-type': 'application/vnd.x+json' }, body: '{}' });
    assert.equal(vnd.body.isAny, 'application/vnd.x+json');
    const text = await request(`${s.base}/req/1`, { method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'hi' });
    assert.equal(text.body.isText, 'text/plain');
    assert.equal(text.body.header, 'text/plain; charset=utf-8');
  });
});
