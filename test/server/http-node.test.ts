import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpNode, type HttpNodeServer } from './http-node-harness.js';
import { request } from '../helpers/server.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { createLogger } from '../../src/base/log.js';
import { isErrorCode } from '../../src/base/errors.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createAdminRouteApp } from '../../src/server/http-node/mounted-app.js';
import { dispatchOrNotFound } from '../../src/server/http-node/server.js';
import type { HttpNodeApp } from '../../src/server/http-node/types.js';

describe('http-node plugin: bodies', () => {
  let s: HttpNodeServer;
  const echo = (req: any, res: any) =>
    res.json({ type: Buffer.isBuffer(req.body) ? 'buffer' : typeof req.body, body: Buffer.isBuffer(req.body) ? [...req.body] : req.body });

  before(async () => {
    s = await startHttpNode({ apiMaxLength: 1024 });
    s.app.post('/echo', echo);
    s.app.put('/echo', echo);
    s.app.get('/echo', echo);
  });
  after(() => s.close());

  test('application/json becomes an object', async () => {
    const r = await request(`${s.base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2],"b":"x"}' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { type: 'object', body: { a: [1, 2], b: 'x' } });
  });

  test('a +json type is parsed as JSON too', async () => {
    const r = await request(`${s.base}/echo`, { method: 'PUT', headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' }, body: '[true]' });
    assert.deepEqual(r.body, { type: 'object', body: [true] });
  });

  test('a form becomes an object, repeated keys become arrays', async () => {
    const r = await request(`${s.base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1&b=two%20words&a=3',
    });
    assert.deepEqual(r.body, { type: 'object', body: { a: ['1', '3'], b: 'two words' } });
  });

  test('text/* becomes a string', async () => {
    const r = await request(`${s.base}/echo`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'héllo' });
    assert.deepEqual(r.body, { type: 'string', body: 'héllo' });
  });

  test('application/octet-stream stays a Buffer', async () => {
    const r = await request(`${s.base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 255, 7]),
    });
    assert.deepEqual(r.body, { type: 'buffer', body: [0, 255, 7] });
  });

  test('binary under another application/* type stays a Buffer', async () => {
    const r = await request(`${s.base}/echo`, { method: 'POST', headers: { 'content-type': 'application/x-thing' }, body: new Uint8Array([0xff, 0xfe]) });
    assert.deepEqual(r.body, { type: 'buffer', body: [255, 254] });
  });

  test('no body is {}', async () => {
    const get = await request(`${s.base}/echo`);
    assert.deepEqual(get.body, { type: 'object', body: {} });
    const post = await request(`${s.base}/echo`, { method: 'POST' });
    assert.deepEqual(post.body, { type: 'object', body: {} });
  });

  test('malformed JSON is a 400 JSON error, not an HTML page', async () => {
    const r = await request(`${s.base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    assert.equal(r.status, 400);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(r.body.code, 'invalid_json');
    assert.match(r.body.message, /^Request body is not valid JSON/);
  });

  test('a JSON scalar is rejected like body-parser strict mode', async () => {
    const r = await request(`${s.base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '42' });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'invalid_json');
  });

  test('a body over apiMaxLength is a 413 JSON error', async () => {
    const r = await request(`${s.base}/echo`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(2048) });
    assert.equal(r.status, 413);
    assert.deepEqual(r.body, { code: 'payload_too_large', message: 'Request body is too large' });
  });
});

describe('http-node plugin: outcomes', () => {
  let s: HttpNodeServer;
  /** The same routes with `httpNodeNotFound: "json"`: Runnel's {code, message} answers instead of Express's pages. */
  let json: HttpNodeServer;
  let dir: string;
  const routes = (app: HttpNodeServer['app']) => {
    app.get('/boom', async () => {
      throw new Error('secret detail');
    });
    app.get('/forbidden', (_req, _res, next) => {
      next(Object.assign(new Error('Not allowed here'), { status: 403 }));
    });
    app.get('/ok', (_req, res) => res.send('ok'));
    app.get('/unprocessable', (_req, _res, next) => {
      next(Object.assign(new Error('Cannot use that'), { status: 422 }));
    });
    app.get('/five', (_req, res) => res.sendFile('five.txt', { root: dir }));
  };
  before(async () => {
    dir = await tempDir();
    await writeFile(path.join(dir, 'five.txt'), 'hello');
    s = await startHttpNode();
    json = await startHttpNode({ httpNodeNotFound: 'json' });
    routes(s.app);
    routes(json.app);
  });
  after(async () => {
    await s.close();
    await json.close();
    await removeDir(dir);
  });

  test('an unknown path is answered as Express does: 404 with its "Cannot GET" page', async () => {
    const r = await request(`${s.base}/nowhere/<b>?x=1`);
    assert.equal(r.status, 404);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(r.headers.get('content-security-policy'), "default-src 'none'");
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(
      r.text,
      '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot GET /nowhere/%3Cb%3E</pre>\n</body>\n</html>\n',
    );
  });

  test('a known path with another method is a 404', async () => {
    const r = await request(`${s.base}/ok`, { method: 'DELETE' });
    assert.equal(r.status, 404);
    assert.match(r.text, /<pre>Cannot DELETE \/ok<\/pre>/);
  });

  test('httpNodeNotFound: "json" answers an unknown path with {code, message} instead', async () => {
    const j = await startHttpNode({ httpNodeNotFound: 'json' });
    try {
      const r = await request(`${j.base}/nowhere?x=1`);
      assert.equal(r.status, 404);
      assert.deepEqual(r.body, { code: 'not_found', message: 'No route GET /nowhere?x=1' });
    } finally {
      await j.close();
    }
  });

  test('an async handler that rejects is a 500 with Express\'s error page without internals, and is logged', async () => {
    const r = await request(`${s.base}/boom`);
    assert.equal(r.status, 500);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(r.text, /<pre>Internal Server Error<\/pre>/);
    assert.ok(!r.text.includes('secret detail'));
    assert.ok(s.logs.some((l) => l.includes('secret detail') && l.includes('"level":50')));
  });

  test('an error with a 4xx status keeps its status and message', async () => {
    const r = await request(`${s.base}/forbidden`);
    assert.equal(r.status, 403);
    assert.match(r.text, /<pre>Error: Not allowed here<\/pre>/);
  });

  test('httpNodeNotFound: "json" answers route errors with {code, message}', async () => {
    assert.deepEqual((await request(`${json.base}/boom`)).body, { code: 'internal_error', message: 'Internal error' });
    assert.deepEqual((await request(`${json.base}/forbidden`)).body, { code: 'forbidden', message: 'Not allowed here' });
  });

  test("a file's unsatisfiable Range or failed If-Match, and another 4xx, keep their status on Express's page", async () => {
    const range = await request(`${s.base}/five`, { headers: { range: 'bytes=100-200' } });
    assert.equal(range.status, 416);
    assert.match(range.text, /<pre>Error: Range Not Satisfiable<\/pre>/);
    const other = await request(`${s.base}/unprocessable`);
    assert.equal(other.status, 422);
    assert.match(other.text, /<pre>Error: Cannot use that<\/pre>/);
  });

  test("a file's unsatisfiable Range or failed If-Match is answered 416 or 412 with its catalogued code", async () => {
    const range = await request(`${json.base}/five`, { headers: { range: 'bytes=100-200' } });
    assert.equal(range.status, 416);
    assert.deepEqual(range.body, { code: 'range_not_satisfiable', message: 'Range Not Satisfiable' });
    const precondition = await request(`${json.base}/five`, { headers: { 'if-match': '"not-its-etag"' } });
    assert.equal(precondition.status, 412);
    assert.deepEqual(precondition.body, { code: 'precondition_failed', message: 'Precondition Failed' });
  });

  test('another 4xx a handler raises is a 400 invalid_request that keeps its message', async () => {
    const r = await request(`${json.base}/unprocessable`);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { code: 'invalid_request', message: 'Cannot use that' });
    assert.ok(isErrorCode(r.body.code));
  });

  test('HEAD runs the GET route without a body', async () => {
    const r = await request(`${s.base}/ok`, { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.equal(r.text, '');
    assert.equal(r.headers.get('content-length'), '2');
  });

  test('OPTIONS on a routed path answers the allowed methods', async () => {
    const r = await request(`${s.base}/ok`, { method: 'OPTIONS' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('allow'), 'GET,HEAD');
    assert.equal(r.text, 'GET,HEAD');
  });
});

describe('http-node plugin: mounting', () => {
  test('under httpNodeRoot the routes see paths relative to the root', async () => {
    const s = await startHttpNode({ httpNodeRoot: '/api' });
    try {
      s.app.get('/x/:id', (req: any, res: any) => res.json({ path: req.path, baseUrl: req.baseUrl, originalUrl: req.originalUrl, id: req.params.id }));
      s.app.get('/', (_req, res: any) => res.send('root'));
      const r = await request(`${s.base}/api/x/7?q=1`);
      assert.deepEqual(r.body, { path: '/x/7', baseUrl: '/api', originalUrl: '/api/x/7?q=1', id: '7' });
      assert.equal((await request(`${s.base}/api`)).text, 'root');
      assert.equal((await request(`${s.base}/x/7`)).status, 404);
    } finally {
      await s.close();
    }
  });

  test('admin routes in a sibling scope on the same root win over http-node routes', async () => {
    const s = await startHttpNode(
      {},
      {
        beforeNode: async (fastify) => {
          await fastify.register(async (admin) => {
            admin.get('/flows', async () => ({ from: 'admin' }));
            admin.get('/nodes/:id', async (request) => ({ from: 'admin', id: (request.params as { id: string }).id }));
          });
        },
      },
    );
    try {
      s.app.get('/flows', (_req, res: any) => res.json({ from: 'node' }));
      s.app.get('/nodes/:id', (_req, res: any) => res.json({ from: 'node' }));
      s.app.get('/mine', (_req, res: any) => res.json({ from: 'node' }));
      assert.deepEqual((await request(`${s.base}/flows`)).body, { from: 'admin' });
      assert.deepEqual((await request(`${s.base}/nodes/abc`)).body, { from: 'admin', id: 'abc' });
      assert.deepEqual((await request(`${s.base}/mine`)).body, { from: 'node' });
      const post = await request(`${s.base}/flows`, { method: 'POST' });
      assert.equal(post.status, 404);
      assert.match(post.text, /<pre>Cannot POST \/flows<\/pre>/, 'on a shared root an unserved path is the node side\'s, as in Node-RED');
    } finally {
      await s.close();
    }
  });
});

describe('http-node plugin: server without httpServerFactory', () => {
  test('requests still get the Express API, and the slow path is reported once', async () => {
    const s = await startHttpNode({}, { plainServer: true });
    try {
      s.app.get('/x/:id', (req: any, res: any) => res.status(201).json({ id: req.params.id, q: req.query.q, host: req.hostname }));
      for (let i = 0; i < 2; i++) {
        const r = await request(`${s.base}/x/9?q=a`);
        assert.equal(r.status, 201);
        assert.deepEqual(r.body, { id: '9', q: 'a', host: '127.0.0.1' });
      }
      assert.equal(s.logs.filter((l) => l.includes('not built with httpServerFactory')).length, 1);
    } finally {
      await s.close();
    }
  });
});

describe('RED.httpAdmin routes', () => {
  const adminScope = (adminApp: HttpNodeApp) => async (fastify: FastifyInstance) => {
    await fastify.register(
      async (admin) => {
        admin.addHook('onRequest', async (_request, reply) => {
          reply.header('X-Admin', 'yes');
        });
        admin.get('/flows', async () => ({ from: 'admin' }));
        admin.setNotFoundHandler((request, reply) => dispatchOrNotFound(adminApp, request, reply));
      },
      { prefix: adminApp.mountPath },
    );
  };
  const contrib = (adminApp: HttpNodeApp) =>
    adminApp.post('/contribapi/:name', (req: any, res: any) => res.json({ name: req.params.name, body: req.body, baseUrl: req.baseUrl }));

  test('on a shared root, requests try RED.httpAdmin before the node routes', async () => {
    const adminApp = createAdminRouteApp(resolveSettings({ userDir: '/nonexistent' }), createLogger('silent'));
    contrib(adminApp);
    const s = await startHttpNode({}, { beforeNode: adminScope(adminApp), adminRoutes: adminApp });
    try {
      s.app.post('/contribapi/:name', (_req, res: any) => res.json({ from: 'node' }));
      s.app.get('/contribapi/:name', (req: any, res: any) => res.json({ from: 'node', url: req.url }));
      const r = await request(`${s.base}/contribapi/moment`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      assert.deepEqual(r.body, { name: 'moment', body: { a: 1 }, baseUrl: '' });
      assert.deepEqual((await request(`${s.base}/contribapi/x?y=1`)).body, { from: 'node', url: '/contribapi/x?y=1' });
      assert.deepEqual((await request(`${s.base}/flows`)).body, { from: 'admin' });
      assert.equal((await request(`${s.base}/nothing`)).status, 404);
    } finally {
      await s.close();
    }
  });

  test('under a separate admin root the not-found handler serves RED.httpAdmin, keeping hook headers', async () => {
    const settings = resolveSettings({ userDir: '/nonexistent', httpAdminRoot: '/admin', httpNodeRoot: '/api' });
    const adminApp = createAdminRouteApp(settings, createLogger('silent'));
    contrib(adminApp);
    const s = await startHttpNode({ httpNodeRoot: '/api' }, { beforeNode: adminScope(adminApp), adminRoutes: adminApp });
    try {
      const r = await request(`${s.base}/admin/contribapi/moment`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-admin'), 'yes');
      assert.deepEqual(r.body, { name: 'moment', body: { a: 1 }, baseUrl: '/admin' });
      const missing = await request(`${s.base}/admin/contribapi`);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, { code: 'not_found', message: 'No route GET /admin/contribapi' });
    } finally {
      await s.close();
    }
  });
});
