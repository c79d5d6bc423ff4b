import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { compilePath, decodeParam } from '../../src/server/http-node/path-pattern.js';
import { startHttpNode, type HttpNodeServer } from './http-node-harness.js';
import { request } from '../helpers/server.js';

function matches(pattern: string, path: string, end = true): Record<string, string | undefined> | null {
  const p = compilePath(pattern, end);
  const m = p.regexp.exec(path);
  if (!m) return null;
  const out: Record<string, string | undefined> = {};
  p.keys.forEach((k, i) => (out[k] = m[i + 1]));
  return out;
}

describe('Express 4 path patterns', () => {
  test('named params, trailing slash and case-insensitivity', () => {
    assert.deepEqual(matches('/a/:id', '/a/42'), { id: '42' });
    assert.deepEqual(matches('/a/:id', '/A/42/'), { id: '42' });
    assert.equal(matches('/a/:id', '/a/42/more'), null);
    assert.equal(matches('/a/:id', '/a/'), null);
    assert.deepEqual(matches('/users/', '/users'), {});
  });

  test('optional params, custom patterns, wildcards and dotted params', () => {
    assert.deepEqual(matches('/a/:id?', '/a'), { id: undefined });
    assert.deepEqual(matches('/a/:id?', '/a/5'), { id: '5' });
    assert.deepEqual(matches('/n/:id(\\d+)', '/n/12'), { id: '12' });
    assert.equal(matches('/n/:id(\\d+)', '/n/ab'), null);
    assert.deepEqual(matches('/files/*', '/files/a/b.txt'), { 0: 'a/b.txt' });
    assert.deepEqual(matches('/f/:name.:ext', '/f/report.pdf'), { name: 'report', ext: 'pdf' });
    assert.equal(matches('/a.b', '/aXb'), null);
  });

  test('use prefixes stop at a segment boundary', () => {
    assert.deepEqual(matches('/api', '/api/x', false), {});
    assert.deepEqual(matches('/api', '/api', false), {});
    assert.equal(matches('/api', '/apix', false), null);
    assert.equal(compilePath('/', false).matchesAll, true);
  });

  test('params decode once; a malformed escape is a 400 error', () => {
    assert.equal(decodeParam('a%2Fb'), 'a/b');
    assert.equal(decodeParam(undefined), undefined);
    assert.throws(() => decodeParam('%E0%A4%A'), (e: any) => e.status === 400 && /Failed to decode param/.test(e.message));
  });
});

describe('ExpressRouter over HTTP', () => {
  let s: HttpNodeServer;
  before(async () => {
    s = await startHttpNode();
  });
  after(() => s.close());

  test('route params are decoded; a malformed escape is a 400', async () => {
    s.app.get('/p/:name/:rest*', (req: any, res: any) => res.json(req.params));
    // Express 4 (path-to-regexp 0.1.12): `:rest*` captures one segment, the rest goes to the unnamed group 0.
    assert.deepEqual((await request(`${s.base}/p/a%20b/c/d`)).body, { name: 'a b', rest: 'c', 0: '/d' });
    // Fastify rejects the malformed escape itself before routing (FST_ERR_BAD_URL).
    const bad = await request(`${s.base}/p/%E0%A4%A/x`);
    assert.equal(bad.status, 400);
  });

  test('query strings: repeated keys become arrays', async () => {
    s.app.get('/q', (req: any, res: any) => res.json(req.query));
    assert.deepEqual((await request(`${s.base}/q?a=1&a=2&b=x%20y&c`)).body, { a: ['1', '2'], b: 'x y', c: '' });
  });

  test('middleware runs in registration order, prefixed middleware sees a trimmed url', async () => {
    const seen: string[] = [];
    s.app.use((req: any, _res: any, next: any) => {
      if (req.path.startsWith('/mw')) seen.push(`all:${req.url}`);
      next();
    });
    s.app.use('/mw', (req: any, _res: any, next: any) => {
      seen.push(`mw:${req.url}:${req.baseUrl}`);
      req.tag = 'tagged';
      next();
    });
    s.app.get('/mw/x', (req: any, res: any) => {
      seen.push(`route:${req.url}`);
      res.send(req.tag);
    });
    const r = await request(`${s.base}/mw/x?z=1`);
    assert.equal(r.text, 'tagged');
    assert.deepEqual(seen, ['all:/mw/x?z=1', 'mw:/x?z=1:/mw', 'route:/mw/x?z=1']);
  });

  test("next('route') skips the rest of a route; several handlers run in order", async () => {
    s.app.get(
      '/skip/:n',
      (req: any, _res: any, next: any) => next(req.params.n === '0' ? 'route' : undefined),
      (_req: any, res: any) => res.send('first'),
    );
    s.app.get('/skip/:n', (_req: any, res: any) => res.send('second'));
    assert.equal((await request(`${s.base}/skip/0`)).text, 'second');
    assert.equal((await request(`${s.base}/skip/1`)).text, 'first');
  });

  test('next(err) skips to the arity-4 error handler, which can answer', async () => {
    const app = s.app;
    app.get('/err', (_req: any, _res: any, next: any) => next(new Error('bad thing')));
    app.get('/err', (_req: any, res: any) => res.send('never'));
    app.use('/err', (_req: any, res: any) => res.send('also never'));
    // RouteApp's handler type has three parameters; error middleware is the four-parameter form.
    const onError = (err: Error, _req: any, res: any, _next: any) => res.status(418).json({ caught: err.message });
    app.use('/err', onError as any);
    const r = await request(`${s.base}/err`);
    assert.equal(r.status, 418);
    assert.deepEqual(r.body, { caught: 'bad thing' });
  });

  test('a synchronous throw becomes next(err)', async () => {
    s.app.get('/throw', () => {
      throw Object.assign(new Error('nope'), { status: 409 });
    });
    const r = await request(`${s.base}/throw`);
    assert.equal(r.status, 409);
    // Express's error page (finalhandler), as for any RED.httpNode route error.
    assert.match(r.text, /<pre>Error: nope<\/pre>/);
  });

  test('removing routes by splicing _router.stack, as Node-RED http-in does', async () => {
    s.app.get('/splice', (_req: any, res: any) => res.send('here'));
    s.app.post('/splice', (_req: any, res: any) => res.send('posted'));
    assert.equal((await request(`${s.base}/splice`)).text, 'here');
    s.app._router.stack.forEach((route, i, routes) => {
      if (route.route && route.route.path === '/splice' && route.route.methods.get) routes.splice(i, 1);
    });
    assert.equal((await request(`${s.base}/splice`)).status, 404);
    assert.equal((await request(`${s.base}/splice`, { method: 'POST' })).text, 'posted');
  });

  test('removeRoute removes exactly that method and path', async () => {
    s.app.get('/rm', (_req: any, res: any) => res.send('get'));
    s.app.put('/rm', (_req: any, res: any) => res.send('put'));
    s.app.all('/rm-all', (_req: any, res: any) => res.send('all'));
    s.app.removeRoute('get', '/rm');
    s.app.removeRoute('all', '/rm-all');
    assert.equal((await request(`${s.base}/rm`)).status, 404);
    assert.equal((await request(`${s.base}/rm`, { method: 'PUT' })).text, 'put');
    assert.equal((await request(`${s.base}/rm-all`, { method: 'PATCH' })).status, 404);
  });

  test('a route added after a request was served is found by the next one', async () => {
    assert.equal((await request(`${s.base}/late`)).status, 404);
    s.app.get('/late', (_req: any, res: any) => res.send('late'));
    assert.equal((await request(`${s.base}/late`)).text, 'late');
  });

  test('registering a route without a handler throws like Express', () => {
    assert.throws(() => s.app.get('/x', 'nope' as any), /requires a callback function but got a string/);
  });
});
