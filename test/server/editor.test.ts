import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { adminAuth, eventually, login, request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { copyFixture } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';
import { compress } from '../../src/server/editor/compress.js';
import { contentHash, precompress, readPrecompressed } from '../../src/server/editor/precompressed.js';

/** The bytes as sent, without the decompression fetch applies. */
function rawGet(url: string, encoding: string): Promise<{ encoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { 'accept-encoding': encoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

const require = createRequire(import.meta.url);
const NODES_DIR = path.dirname(require.resolve('@node-red/nodes/package.json'));

const CLIENT_PUBLIC = path.join(path.dirname(require.resolve('@node-red/editor-client/package.json')), 'public');

describe('the Node-RED editor', { timeout: 120_000 }, () => {
  let server: TestServer;
  let token: string;
  let work: string;
  const api = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), { token, ...init });

  before(async () => {
    // What `npm ci` does after compiling; a build by tsc alone has no copies yet.
    await precompress(CLIENT_PUBLIC);
    work = await tempDir('runnel-editor-');
    await writeFile(path.join(work, 'logo.png'), 'not really a png');
    server = await startServer({
      adminAuth: adminAuth(),
      editorTheme: { page: { title: 'Runnel test' }, header: { title: 'My flows', image: path.join(work, 'logo.png') }, palette: { catalogues: [] } },
    });
    token = await login(server);
  });
  after(async () => {
    await server.dispose();
    await removeDir(work);
  });

  it('renders the page from editor-client with the theme, without a token', async () => {
    const res = await request(server.url);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(res.text, /<title>Runnel test<\/title>/);
    const buster = /red\/red\.min\.js\?v=(\w+)/.exec(res.text)?.[1];
    assert.ok(buster, 'the page loads red.min.js with a cache buster');
    assert.match(res.text, /vendor\/monaco\/monaco-bootstrap\.js/);
    const etag = res.headers.get('etag');
    assert.ok(etag);
    assert.equal((await fetch(server.url, { headers: { 'if-none-match': etag } })).status, 304);
  });

  it('serves the editor files with ETags, compression, and year-long caching for versioned URLs', async () => {
    const page = await request(server.url);
    const buster = /red\/red\.min\.js\?v=(\w+)/.exec(page.text)![1];
    const versioned = await fetch(server.at(`red/red.min.js?v=${buster}`), { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(versioned.status, 200);
    assert.match(versioned.headers.get('content-type') ?? '', /^application\/javascript/);
    assert.equal(versioned.headers.get('content-encoding'), 'gzip');
    assert.match(versioned.headers.get('cache-control') ?? '', /immutable/);
    const body = await versioned.text();
    const original = await readFile(require.resolve('@node-red/editor-client/public/red/red.min.js'), 'utf8');
    assert.equal(body, original, 'the file is served unchanged');
    const plain = await fetch(server.at('red/keymap.json'));
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('cache-control'), 'no-cache');
    const etag = plain.headers.get('etag')!;
    assert.equal((await fetch(server.at('red/keymap.json'), { headers: { 'if-none-match': etag } })).status, 304);
    for (const p of ['vendor/vendor.js', 'vendor/monaco/monaco-bootstrap.js', 'types/node-red/func.d.ts', 'favicon.ico', 'red/style.min.css']) {
      assert.equal((await fetch(server.at(p))).status, 200, p);
    }
  });

  it('sends the compressed copies the build made of the editor files (smaller than compressing on the fly)', async () => {
    const original = await readFile(path.join(CLIENT_PUBLIC, 'vendor', 'vendor.js'));
    for (const encoding of ['br', 'gzip'] as const) {
      const copy = await readPrecompressed(contentHash(original), encoding);
      assert.ok(copy, `the build made a ${encoding} copy`);
      const sent = await rawGet(server.at('vendor/vendor.js'), encoding);
      assert.equal(sent.encoding, encoding);
      assert.ok(sent.body.equals(copy), `${encoding}: the copy is sent as it is`);
      assert.ok(sent.body.length < (await compress(original, encoding)).length, `${encoding}: smaller than the serving path's level`);
      const unpacked = encoding === 'br' ? zlib.brotliDecompressSync(sent.body) : zlib.gunzipSync(sent.body);
      assert.ok(unpacked.equals(original));
    }
  });

  it('answers missing files and escapes from the package with a 404', async () => {
    for (const p of ['red/nope.js', 'red/..%2F..%2Fpackage.json']) {
      const res = await request(server.at(p));
      assert.equal(res.status, 404, p);
      assert.equal(res.body.code, 'not_found');
    }
    // The URL parser resolves the dots first: /package.json is no editor path, so it is an
    // unserved http-in path on this shared root, answered with Express's page.
    const dots = await request(server.at('vendor/%2e%2e/%2e%2e/package.json'));
    assert.equal(dots.status, 404);
    assert.match(dots.text, /<pre>Cannot GET \/package.json<\/pre>/);
  });

  it('answers GET /theme and the theme files it names', async () => {
    const res = await request(server.at('theme'));
    assert.equal(res.status, 200);
    assert.equal(res.body.page.title, 'Runnel test');
    assert.equal(res.body.header.title, 'My flows');
    assert.equal(res.body.header.image, 'theme/header/logo.png');
    const image = await request(server.at(res.body.header.image));
    assert.equal(image.status, 200);
    assert.equal(image.text, 'not really a png');
  });

  it('serves the message catalogs: editor, node-red (core nodes) and unknown namespaces as {}', async () => {
    const editor = await request(server.at('locales/editor?lng=en-US'));
    assert.equal(editor.body.common.label.name, 'Name');
    const core = await request(server.at('locales/node-red?lng=de'));
    assert.equal(core.body.common.label.payload, 'Nutzdaten (Payload)');
    const fallback = await request(server.at('locales/jsonata?lng=xx-YY'));
    assert.equal(typeof fallback.body.$string, 'object');
    assert.deepEqual((await request(server.at('locales/nothing-here'))).body, {});
  });

  it('lists the core sets as module node-red with Node-RED set names, and their HTML for the editor', async () => {
    const sets = (await api('nodes', { headers: { accept: 'application/json' } })).body as { id: string; module: string; types: string[] }[];
    assert.ok(sets.every((s) => s.module !== 'runnel'));
    const ids = sets.map((s) => s.id);
    for (const id of ['node-red/inject', 'node-red/split', 'node-red/CSV', 'node-red/JSON', 'node-red/httpin', 'node-red/file']) assert.ok(ids.includes(id), id);
    assert.deepEqual(sets.find((s) => s.id === 'node-red/split')!.types.sort(), ['join', 'split']);
    const html = await api('nodes', { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
    assert.equal(html.status, 200);
    assert.equal(html.headers.get('content-encoding'), 'br', 'the 400 KB of node HTML travel compressed');
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    const blocks = [...html.text.matchAll(/<!-- --- \[red-module:([^\]]+)\] --- -->/g)].map((m) => m[1]);
    assert.deepEqual(blocks.sort(), ids.filter((id) => id.startsWith('node-red/')).sort());
    // Every type the editor HTML defines is one Runnel runs: nothing in the palette that cannot deploy.
    const registered = new Set(sets.flatMap((s) => s.types));
    const defined = [...html.text.matchAll(/RED\.nodes\.registerType\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    assert.ok(defined.length >= 30, `${defined.length} types defined`);
    for (const type of defined) assert.ok(registered.has(type), `${type} is defined in the editor but not registered`);
    assert.ok(html.text.includes('data-help-name="inject"'), 'help is included');
    const one = await api('nodes/node-red/inject', { headers: { accept: 'text/html' } });
    assert.ok(one.text.startsWith('\n<!-- --- [red-module:node-red/inject] --- -->'));
    const json = await api('nodes/node-red/inject');
    assert.equal(json.body.id, 'node-red/inject');
    assert.equal(json.body.local, false);
  });

  it('serves messages and icons for core and installed modules', async () => {
    const dir = await copyFixture('node-red-contrib-upper', work, 'upper');
    assert.equal((await api('nodes', { method: 'POST', json: { module: dir } })).status, 200);
    const messages = await api('nodes/messages?lng=en-US');
    assert.equal(typeof messages.body['node-red'].inject, 'object');
    assert.ok(messages.body['node-red-contrib-upper/upper'], 'the installed set has its own namespace');
    const own = await api('nodes/node-red-contrib-upper/upper/messages');
    assert.deepEqual(own.body, messages.body['node-red-contrib-upper/upper']);
    const html = await api('nodes/node-red-contrib-upper/upper', { headers: { accept: 'text/html' } });
    assert.match(html.text, /data-template-name="upper-case"/);
    assert.match(html.text, /Upper-cases the payload/);
    const all = await api('nodes', { headers: { accept: 'text/html' } });
    assert.match(all.text, /\[red-module:node-red-contrib-upper\/upper\]/);
    const icons = await api('icons');
    assert.ok(icons.body['node-red'].includes('inject.svg'));
    assert.deepEqual(icons.body['node-red-contrib-upper'], ['upper.svg']);
    const icon = await fetch(server.at('icons/node-red-contrib-upper/upper.svg'));
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
    const fallback = await fetch(server.at('icons/node-red/no-such.svg'));
    assert.equal(await fallback.text(), await readFile(path.join(NODES_DIR, 'icons', 'arrow-in.svg'), 'utf8'));
    const resource = await fetch(server.at('resources/node-red-contrib-upper/upper-lib.js'));
    assert.equal(await resource.text(), 'window.upperLoaded = true;\n');
    assert.equal((await request(server.at('resources/node-red-contrib-upper/../package.json'))).status, 404);
    assert.equal((await api('nodes/node-red-contrib-upper', { method: 'DELETE' })).status, 204);
  });

  it('needs a token for the editor API and answers the editor settings keys', async () => {
    assert.equal((await request(server.at('nodes/messages'))).status, 401);
    assert.equal((await request(server.at('settings/user'))).status, 401);
    const settings = await api('settings');
    for (const key of ['editorTheme', 'libraries', 'runtimeState', 'diagnostics', 'functionExternalModules', 'tlsConfigDisableLocalFiles', 'context', 'externalModules']) {
      assert.ok(key in settings.body, key);
    }
    assert.deepEqual(settings.body.editorTheme.palette, { catalogues: [] });
    assert.equal(settings.body.editorTheme.projects.enabled, false);
    assert.equal(settings.body.user.username, 'admin');
    assert.deepEqual(await api('plugins').then((r) => r.body), []);
    assert.deepEqual(await api('plugins/messages').then((r) => r.body), {});
  });

  it('keeps each user\'s editor settings through restarts, merged as Node-RED does', async () => {
    assert.deepEqual((await api('settings/user')).body, {});
    assert.equal((await api('settings/user', { method: 'POST', json: { editor: { view: { 'view-grid-size': 20 } } } })).status, 204);
    assert.equal((await api('settings/user', { method: 'POST', json: { telemetryEnabled: false } })).status, 204);
    const reader = await login(server, 'reader', 'reader-password-1', 'read');
    assert.deepEqual((await request(server.at('settings/user'), { token: reader })).body, {});
    assert.equal((await request(server.at('settings/user'), { method: 'POST', json: { x: 1 }, token: reader })).status, 401);
    assert.equal((await api('settings/user', { method: 'POST', json: [1, 2] })).status, 400);
    const stored = JSON.parse(await readFile(path.join(server.userDir, '.config.users.json'), 'utf8'));
    assert.deepEqual(stored.admin, { editor: { view: { 'view-grid-size': 20 } }, telemetryEnabled: false });
  });

  it('runs the inject button and the debug switches through the core nodes\' admin routes', async () => {
    const flows = [
      { id: 't1', type: 'tab', label: 'T' },
      { id: 'inj', type: 'inject', z: 't1', props: [{ p: 'payload', v: 'hi', vt: 'str' }], wires: [['dbg']] },
      { id: 'dbg', type: 'debug', z: 't1', active: true, tosidebar: true, wires: [] },
    ];
    await deploy(server, flows, { token });
    const debug = server.instance.runtime.services.nodes.get('dbg') as unknown as { active: boolean };
    assert.equal((await api('debug/dbg/disable', { method: 'POST' })).status, 201);
    assert.equal(debug.active, false);
    assert.equal((await api('debug/enable', { method: 'POST', json: { nodes: ['dbg'] } })).status, 200);
    assert.equal(debug.active, true);
    assert.equal((await api('debug/enable', { method: 'POST', json: {} })).status, 400);
    assert.equal((await api('debug/dbg/sideways', { method: 'POST' })).status, 404);
    assert.equal((await api('debug/nope/enable', { method: 'POST' })).status, 404);
    assert.equal((await request(server.at('debug/dbg/enable'), { method: 'POST' })).status, 401);
    const published: unknown[] = [];
    const onComms = (e: { topic: string; data: unknown }) => e.topic === 'debug' && published.push(e.data);
    server.instance.runtime.events.on('comms', onComms);
    try {
      assert.equal((await api('inject/inj', { method: 'POST', json: {} })).status, 200);
      await eventually(() => published.length === 1);
      assert.equal((published[0] as { msg: string }).msg, 'hi');
      const props = { __user_inject_props__: [{ p: 'payload', v: 'edited', vt: 'str' }] };
      assert.equal((await api('inject/inj', { method: 'POST', json: props })).status, 200);
      await eventually(() => published.length === 2);
      assert.equal((published[1] as { msg: string }).msg, 'edited');
    } finally {
      server.instance.runtime.events.off('comms', onComms);
    }
    const missing = await api('inject/dbg', { method: 'POST', json: {} });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'not_found');
    const view = await request(server.at('debug/view/debug-utils.js'));
    assert.equal(view.status, 200);
    assert.equal((await request(server.at('debug/view/..%2F..%2F21-debug.js'))).status, 404);
  });
});

describe('editor settings', { timeout: 60_000 }, () => {
  it('disableEditor turns the page and its files off, not the admin API', async () => {
    const server = await startServer({ disableEditor: true });
    try {
      for (const p of ['', 'red/red.min.js', 'theme', 'locales/editor']) assert.equal((await request(server.at(p))).status, 404, p);
      assert.equal((await request(server.at('settings'))).status, 200);
      assert.equal((await request(server.at('nodes'), { headers: { accept: 'text/html' } })).status, 200);
    } finally {
      await server.dispose();
    }
  });

  it('follows httpAdminRoot, adding the trailing slash the relative URLs need', async () => {
    const server = await startServer({ httpAdminRoot: '/admin', editorTheme: { codeEditor: { lib: 'ace' } } });
    try {
      const base = server.url.replace(/\/admin\/$/, '');
      const redirect = await fetch(`${base}/admin`, { redirect: 'manual' });
      assert.equal(redirect.status, 301);
      assert.equal(redirect.headers.get('location'), '/admin/');
      const page = await request(`${base}/admin/`);
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.text, /monaco-bootstrap/, 'codeEditor.lib ace leaves Monaco out');
      assert.equal((await request(`${base}/admin/red/keymap.json`)).status, 200);
      assert.equal((await request(`${base}/red/keymap.json`)).status, 404);
      assert.deepEqual((await request(`${base}/admin/settings`)).body.codeEditor, { lib: 'ace', options: {} });
    } finally {
      await server.dispose();
    }
  });
});

describe('GET /settings in Node-RED\'s shape', { timeout: 60_000 }, () => {
  it('describes the anonymous user, adds the trailing slash to httpNodeRoot and keeps only the basics without the editor', async () => {
    const anon = await startServer({ adminAuth: adminAuth({ default: { permissions: 'read' } }), httpNodeRoot: '/api' });
    try {
      const body = (await request(anon.at('settings'))).body;
      assert.deepEqual(body.user, { anonymous: true, permissions: 'read' });
      assert.equal(body.httpNodeRoot, '/api/');
      const token = await login(anon);
      assert.deepEqual((await request(anon.at('settings'), { token })).body.user, { username: 'admin', permissions: '*' });
    } finally {
      await anon.dispose();
    }
    const bare = await startServer({ disableEditor: true, diagnostics: { enabled: false }, paletteCategories: ['common'] });
    try {
      const body = (await request(bare.at('settings'))).body;
      assert.deepEqual(Object.keys(body).filter((k) => !['runnel', 'state'].includes(k)).sort(), ['httpNodeRoot', 'version']);
    } finally {
      await bare.dispose();
    }
    const themed = await startServer({ diagnostics: { enabled: false }, paletteCategories: ['common'], nodeDefaults: { inject: { repeat: '' } }, editorTheme: { markdownEditor: {}, mermaid: { enabled: false }, palette: { categories: ['function'] } } });
    try {
      const body = (await request(themed.at('settings'))).body;
      assert.deepEqual(body.diagnostics, { enabled: false, ui: false });
      assert.deepEqual(body.paletteCategories, ['common']);
      assert.deepEqual(body.nodeDefaults, { inject: { repeat: '' } });
      assert.deepEqual(body.markdownEditor, { mermaid: { enabled: true } });
      assert.deepEqual(body.mermaid, { enabled: false });
      assert.deepEqual(body.editorTheme.palette.categories, { order: ['function'] });
    } finally {
      await themed.dispose();
    }
  });
});

describe('the editor\'s context sidebar and libraries', { timeout: 60_000 }, () => {
  let server: TestServer;
  let work: string;
  const api = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);

  before(async () => {
    work = await tempDir('runnel-editor-lib-');
    server = await startServer({ contextStorage: { default: { module: 'memory' }, file: { module: 'localfilesystem' } } });
  });
  after(async () => {
    await server.dispose();
    await removeDir(work);
  });

  it('shows global, flow and node context per store, encoded, and deletes a key', async () => {
    const flows = [
      { id: 't1', type: 'tab', label: 'T' },
      { id: 'inj', type: 'inject', z: 't1', once: true, onceDelay: 0, props: [{ p: 'payload', v: '', vt: 'date' }], wires: [['fn']] },
      {
        id: 'fn',
        type: 'function',
        z: 't1',
        func: 'global.set("g", Buffer.from("hi")); flow.set("f", {a: 1}); context.set("n", "node value"); global.set("kept", 1, "file"); return msg;',
        outputs: 1,
        wires: [[]],
      },
    ];
    await deploy(server, flows);
    await eventually(async () => (await api('context/global')).body.default?.g);
    const global = (await api('context/global')).body;
    assert.deepEqual(global.default.g, { msg: '6869', format: 'buffer[2]' });
    assert.deepEqual(global.file.kept, { msg: '1', format: 'number' });
    assert.deepEqual((await api('context/flow/t1')).body.default.f, { msg: '{"a":1}', format: 'Object' });
    assert.deepEqual((await api('context/node/fn')).body.default.n, { msg: 'node value', format: 'string[10]' });
    assert.deepEqual((await api('context/node/fn/n?store=default')).body, { msg: 'node value', format: 'string[10]' });
    assert.equal((await api('context/global/kept?store=file', { method: 'DELETE' })).status, 204);
    assert.deepEqual((await api('context/global?store=file')).body, { file: {} });
    assert.equal((await api('context/node/nope')).status, 404);
    assert.equal((await api('context/flow/fn')).status, 404, 'a node is not a flow');
    assert.equal((await api('context/global/g?store=nope')).status, 404);
  });

  it('saves and lists flows and functions in the local library, and lists module examples', async () => {
    const flow = [{ id: 'a', type: 'comment', name: 'saved' }];
    assert.deepEqual((await api('library/local/flows/')).body, []);
    assert.equal((await api('library/local/flows/mine/first.json', { method: 'POST', json: flow })).status, 204);
    assert.deepEqual((await api('library/local/flows/')).body, ['mine']);
    assert.deepEqual((await api('library/local/flows/mine/')).body, [{ fn: 'first.json' }]);
    const read = await api('library/local/flows/mine/first.json');
    assert.match(read.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(read.body, flow);
    const fn = { name: 'double', outputs: 1, text: 'msg.payload *= 2;\nreturn msg;' };
    assert.equal((await api('library/local/functions/double.js', { method: 'POST', json: fn })).status, 204);
    assert.deepEqual((await api('library/local/functions/')).body, [{ name: 'double', outputs: '1', fn: 'double.js' }]);
    assert.equal((await api('library/local/functions/double.js')).text, fn.text);
    assert.equal((await api('library/local/flows/..%2F..%2Fflows.json')).status, 404);
    assert.equal((await api('library/local/fl%20ows/x', { method: 'POST', json: {} })).status, 400);
    assert.equal((await api('library/examples/flows/x', { method: 'POST', json: flow })).status, 403);
    const dir = await copyFixture('node-red-contrib-shout', work);
    assert.equal((await api('nodes', { method: 'POST', json: { module: dir } })).status, 200);
    assert.deepEqual((await api('library/examples/flows/')).body, ['node-red-contrib-shout']);
    assert.deepEqual((await api('library/examples/flows/node-red-contrib-shout/')).body, [{ fn: 'shout-demo' }]);
    assert.equal((await api('library/examples/flows/node-red-contrib-shout/shout-demo')).body[0].name, 'example');
  });
});
