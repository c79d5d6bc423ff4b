import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy, type Conf } from '../helpers/deploy.js';
import { resolveSettings, SettingsError } from '../../src/settings/settings.js';
import { adminHash, ADMIN_PASSWORD } from '../helpers/users.js';
import { send } from './support.js';

/**
 * Node-RED's HTTP security settings, each through real HTTP: before, Runnel
 * ignored them silently (an httpNodeAuth-protected flow answered anyone).
 */

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
const GOOD = basic('flows', ADMIN_PASSWORD);

function echoFlow(url: string, method = 'get'): Conf[] {
  return [
    { id: `in-${method}`, type: 'http in', z: 't1', url, method, wires: [[`fn-${method}`]] },
    { id: `fn-${method}`, type: 'function', z: 't1', func: 'msg.payload = {ok: true, saw: msg.req.headers["x-seen-by"] || null}; return msg;', wires: [[`out-${method}`]] },
    { id: `out-${method}`, type: 'http response', z: 't1', wires: [] },
  ];
}

describe('httpNodeAuth, httpStatic, httpStaticAuth, httpNodeCors, httpNodeMiddleware, httpAdminMiddleware', () => {
  let server: TestServer;
  let files: string;
  let adminHits = 0;

  before(async () => {
    files = await tempDir('runnel-static-');
    await writeFile(path.join(files, 'hello.txt'), 'hello static');
    await mkdir(path.join(files, 'sub'));
    await writeFile(path.join(files, 'sub', 'index.html'), '<p>sub index</p>');
    server = await startServer({
      httpNodeAuth: { user: 'flows', pass: adminHash },
      httpStaticAuth: { user: 'flows', pass: adminHash },
      httpStatic: [{ path: files, root: '/files/', options: { maxAge: '1h' } }],
      httpStaticCors: { origin: 'https://static.example' },
      httpNodeCors: { origin: 'https://app.example', methods: 'GET,POST' },
      httpNodeMiddleware: (req: { headers: Record<string, string> }, _res: unknown, next: () => void) => {
        req.headers['x-seen-by'] = 'node-middleware';
        next();
      },
      httpAdminMiddleware: [
        (_req: unknown, res: { setHeader(n: string, v: string): void }, next: () => void) => {
          adminHits++;
          res.setHeader('X-Admin-Middleware', 'yes');
          next();
        },
        (req: { url: string }, res: { statusCode: number; end(s: string): void }, next: () => void) => {
          if ((req.url.startsWith('/settings') || req.url.startsWith('/inject/')) && req.url.includes('refuse')) {
            res.statusCode = 418;
            res.end('refused by middleware');
          } else next();
        },
      ],
    });
    const button = { id: 'button', type: 'inject', z: 't1', x: 1, y: 1, wires: [[]] };
    await deploy(server, [...echoFlow('/echo'), ...echoFlow('/echo', 'post'), button], { tab: 't1' });
  });
  after(async () => {
    await server?.dispose();
    await removeDir(files);
  });

  it('httpNodeAuth: an http-in route answers only with the right user and password', async () => {
    assert.equal((await send(server.at('echo'))).status, 401);
    const wrong = await send(server.at('echo'), { headers: { authorization: basic('flows', 'wrong') } });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers['www-authenticate'], 'Basic realm="Authorization Required"');
    assert.equal(wrong.body.code, 'unauthorized');
    assert.equal((await send(server.at('echo'), { headers: { authorization: basic('other', ADMIN_PASSWORD) } })).status, 401);
    const ok = await send(server.at('echo'), { headers: { authorization: GOOD } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.ok, true);
    // A second request reuses the remembered password (and still checks the user).
    assert.equal((await send(server.at('echo'), { headers: { authorization: GOOD } })).status, 200);
    // Unserved paths need the password too, as in Node-RED (no probing for routes).
    assert.equal((await send(server.at('nothing-here'))).status, 401);
  });

  it('httpNodeAuth: an unauthenticated body is refused before it is read', async () => {
    // The announced body is never sent: the answer must come from the headers alone.
    const r = await send(server.at('echo'), { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': 1_000_000 }, timeoutMs: 10_000 });
    assert.equal(r.status, 401);
    const ok = await send(server.at('echo'), { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json', authorization: GOOD } });
    assert.equal(ok.status, 200);
  });

  it('httpNodeAuth leaves the admin API to adminAuth', async () => {
    const r = await send(server.at('settings'));
    assert.equal(r.status, 200);
  });

  it('httpNodeCors: preflights pass without a password and routes carry the CORS headers', async () => {
    const pre = await send(server.at('echo'), { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example');
    assert.equal(pre.headers['access-control-allow-methods'], 'GET,POST');
    const get = await send(server.at('echo'), { headers: { origin: 'https://app.example', authorization: GOOD } });
    assert.equal(get.status, 200);
    assert.equal(get.headers['access-control-allow-origin'], 'https://app.example');
  });

  it('httpNodeMiddleware runs before each http-in route', async () => {
    const r = await send(server.at('echo'), { headers: { authorization: GOOD } });
    assert.equal(r.body.saw, 'node-middleware');
  });

  it('httpStatic + httpStaticAuth: files under their root, behind the static password', async () => {
    assert.equal((await send(server.at('files/hello.txt'))).status, 401);
    const r = await send(server.at('files/hello.txt'), { headers: { authorization: GOOD } });
    assert.equal(r.status, 200);
    assert.equal(r.text, 'hello static');
    assert.equal(r.headers['cache-control'], 'public, max-age=3600');
    const sub = await send(server.at('files/sub/'), { headers: { authorization: GOOD } });
    assert.equal(sub.text, '<p>sub index</p>');
    // A file outside the directory is never served.
    const escape = await send(server.at('files/..%2f..%2fetc/passwd'), { headers: { authorization: GOOD } });
    assert.ok(escape.status === 404 || escape.status === 403, `got ${escape.status}`);
    assert.equal((await send(server.at('files/missing.txt'), { headers: { authorization: GOOD } })).status, 404);
  });

  it('httpStaticCors: static files carry their CORS headers', async () => {
    const r = await send(server.at('files/hello.txt'), { headers: { authorization: GOOD, origin: 'https://static.example' } });
    assert.equal(r.headers['access-control-allow-origin'], 'https://static.example');
  });

  it('httpAdminMiddleware runs before every admin route and may answer itself', async () => {
    const before = adminHits;
    const r = await send(server.at('settings'));
    assert.equal(r.headers['x-admin-middleware'], 'yes');
    assert.ok(adminHits > before);
    const refused = await send(server.at('settings?refuse=1'));
    assert.equal(refused.status, 418);
    assert.equal(refused.text, 'refused by middleware');
    // http-in routes are not admin routes.
    const node = await send(server.at('echo'), { headers: { authorization: GOOD } });
    assert.equal(node.headers['x-admin-middleware'], undefined);
  });

  it('httpAdminMiddleware also runs before the routes nodes add through RED.httpAdmin on the shared root', async () => {
    const pressed = await send(server.at('inject/button'), { method: 'POST' });
    assert.equal(pressed.status, 200);
    assert.equal(pressed.headers['x-admin-middleware'], 'yes');
    const refused = await send(server.at('inject/button?refuse=1'), { method: 'POST' });
    assert.equal(refused.status, 418);
    assert.equal(refused.text, 'refused by middleware');
  });
});

describe('httpNodeAuth as middleware, httpStatic as a string, httpServerOptions', () => {
  let server: TestServer;
  let files: string;

  before(async () => {
    files = await tempDir('runnel-static-');
    await writeFile(path.join(files, 'index.html'), '<p>home</p>');
    server = await startServer({
      httpNodeRoot: '/api',
      httpStatic: files,
      httpNodeAuth: (req: { headers: Record<string, string> }, res: { statusCode: number; end(): void }, next: () => void) => {
        if (req.headers['x-token'] === 'let-me-in') next();
        else {
          res.statusCode = 403;
          res.end();
        }
      },
      httpServerOptions: { 'trust proxy': 'loopback', etag: true, 'x-powered-by': false, 'query parser': 'extended', views: '/tmp' },
      httpRoot: '/everything',
    });
    await deploy(server, echoFlow('/echo'), { tab: 't1' });
  });
  after(async () => {
    await server?.dispose();
    await removeDir(files);
  });

  it('a middleware httpNodeAuth guards the node routes', async () => {
    assert.equal((await send(server.at('api/echo'))).status, 403);
    assert.equal((await send(server.at('api/echo'), { headers: { 'x-token': 'let-me-in' } })).status, 200);
  });

  it('a string httpStatic serves its directory at /, after the admin routes', async () => {
    const r = await send(server.at('index.html'));
    assert.equal(r.status, 200);
    assert.equal(r.text, '<p>home</p>');
    // The editor keeps GET /, as in Node-RED (the admin app is mounted before the static files).
    assert.match((await send(server.at(''))).text, /<html/i);
    assert.equal((await send(server.at('nope.html'))).status, 404);
  });

  it('names every unsupported setting in one warning line at start', () => {
    const lines = server.logs.filter((l) => l.includes('Settings Runnel does not support'));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /httpRoot/);
    assert.match(lines[0], /httpServerOptions\[\\?"query parser\\?"\]/);
    assert.match(lines[0], /httpServerOptions\[\\?"views\\?"\]/);
    assert.doesNotMatch(lines[0], /trust proxy|x-powered-by|etag|httpStatic|httpNodeAuth/);
  });
});

describe('httpServerOptions: the Express app settings of the http-in routes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      httpServerOptions: {
        'case sensitive routing': true, 'strict routing': true, 'json spaces': 2, 'json escape': true, 'jsonp callback name': 'cb', etag: 'strong', 'x-powered-by': true,
        'trust proxy': 'loopback',
      },
    });
    await deploy(server, [
      { id: 'in', type: 'http in', z: 't1', url: '/Exact/', method: 'get', wires: [['fn']] },
      { id: 'fn', type: 'function', z: 't1', func: 'msg.payload = {tag: "<b>"}; return msg;', wires: [['out']] },
      { id: 'who-in', type: 'http in', z: 't1', url: '/who/', method: 'get', wires: [['who']] },
      { id: 'who', type: 'function', z: 't1', func: 'msg.payload = {ip: msg.req.ip, ips: msg.req.ips, protocol: msg.req.protocol, hostname: msg.req.hostname}; return msg;', wires: [['out']] },
      { id: 'out', type: 'http response', z: 't1', wires: [] },
    ], { tab: 't1' });
  });
  after(() => server?.dispose());

  it('case sensitive and strict routing decide which paths reach the route', async () => {
    assert.equal((await send(server.at('Exact/'))).status, 200);
    assert.equal((await send(server.at('exact/'))).status, 404);
    assert.equal((await send(server.at('Exact'))).status, 404);
  });

  it('json spaces, json escape, jsonp callback name, etag and x-powered-by shape the response', async () => {
    const r = await send(server.at('Exact/'));
    assert.equal(r.text, '{\n  "tag": "\\u003cb\\u003e"\n}');
    assert.equal(r.headers['x-powered-by'], 'Express');
    const tag = r.headers.etag as string;
    assert.match(tag, /^"[^"]+"$/, 'a strong ETag');
    assert.equal((await send(server.at('Exact/'), { headers: { 'if-none-match': tag } })).status, 304);
    const jsonp = await send(server.at('Exact/?cb=done'));
    assert.match(jsonp.text, /typeof done === 'function' && done\(/);
  });

  it('trust proxy: msg.req.ip, ips, protocol and hostname come from a trusted proxy\'s X-Forwarded-* headers', async () => {
    const r = await send(server.at('who/'), { headers: { 'x-forwarded-for': '203.0.113.7, 127.0.0.1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'flows.example' } });
    assert.deepEqual(JSON.parse(r.text), { ip: '203.0.113.7', ips: ['203.0.113.7', '127.0.0.1'], protocol: 'https', hostname: 'flows.example' });
  });

  it('a value of the wrong type is one start error', () => {
    refused({ httpServerOptions: { etag: 'sometimes' } }, /httpServerOptions\["etag"\] must be true, false, "weak", "strong" or a function/);
  });
});

/**
 * The settings refuse `raw` with one line naming the problem: the command line prints that line
 * and exits 1 (cli.test.ts starts the real process for that), so these cases need no process each.
 */
function refused(raw: Record<string, unknown>, message: RegExp): void {
  assert.throws(() => resolveSettings({ uiPort: 0, ...raw }), (e: unknown) => {
    assert.ok(e instanceof SettingsError, String(e));
    assert.doesNotMatch(e.message, /\n/);
    assert.match(e.message, message);
    return true;
  });
}

describe('bad security settings stop the start with one clear line', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['httpNodeAuth without a bcrypt pass', { httpNodeAuth: { user: 'a', pass: 'plain' } }, /httpNodeAuth must be \{user, pass\}/],
    ['httpStaticAuth not an object', { httpStaticAuth: 'x' }, /httpStaticAuth must be/],
    ['httpStatic entry without a path', { httpStatic: [{ root: '/x' }] }, /httpStatic\[0\] must be a directory path/],
    ['httpNodeCors not an object', { httpNodeCors: true }, /httpNodeCors must be an object/],
    ['httpNodeMiddleware from JSON', { httpNodeMiddleware: 'fn' }, /httpNodeMiddleware must be a function/],
    ['httpAdminMiddleware from JSON', { httpAdminMiddleware: [1] }, /httpAdminMiddleware must be a function/],
    ['requireHttps not a boolean', { requireHttps: 'yes' }, /requireHttps must be true or false/],
    ['https without a cert', { https: { key: 'k' } }, /https needs key and cert/],
    ['httpsRefreshInterval with an object https', { https: { key: 'k', cert: 'c' }, httpsRefreshInterval: 1 }, /httpsRefreshInterval needs https to be a function/],
  ];
  for (const [name, settings, message] of cases) it(name, () => refused(settings, message));
});
