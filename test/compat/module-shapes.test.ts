import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { npmPack } from '../registry/support.js';
import { removeDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

/** test/fixtures/shapes: modules shaped like the popular ones that once failed to load or run. */
const SHAPES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/shapes');
const TAB = 'shapes';

async function copyShape(name: string, parent: string): Promise<string> {
  const dir = path.join(parent, name);
  await cp(path.join(SHAPES, name), dir, { recursive: true });
  return dir;
}

function node(id: string, type: string, wires: string[][] = [], props: Record<string, unknown> = {}) {
  return { id, type, z: TAB, x: 100, y: 100, wires, ...props };
}

/** http in (GET url) → `type` → http response, ids prefixed by `id`. */
function served(id: string, url: string, type: string, props: Record<string, unknown> = {}, method = 'get') {
  return [
    node(`${id}-in`, 'http in', [[id]], { url, method }),
    node(id, type, [[`${id}-out`]], props),
    node(`${id}-out`, 'http response'),
  ];
}

describe('modules shaped like the popular ones run as on Node-RED', { timeout: 180_000 }, () => {
  let server: TestServer;
  let work: string;
  const api = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), init);
  const install = async (name: string) => {
    const res = await api('nodes', { method: 'POST', json: { module: await copyShape(name, work) } });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  before(async () => {
    work = await tempDir('runnel-shapes-');
    server = await startServer({ logging: { level: 'debug' } });
    await install('node-red-contrib-shape-probe');
    await install('node-red-contrib-shape-plugin');
  });
  after(async () => {
    await server.dispose();
    await removeDir(work);
  });

  it('sets _wireCount, _wire, g and z on node instances as Node-RED does, and hands constructors a config without symbols', async () => {
    await deploy(server, [
      ...served('one', '/probe/one', 'shape-probe'),
      node('two-in', 'http in', [['two']], { url: '/probe/two', method: 'get' }),
      node('two', 'shape-probe', [['two-out', 'two-debug']]),
      node('two-out', 'http response'),
      node('two-debug', 'debug', [], { active: false }),
    ], { api: 'v2', tab: TAB });
    const one = await api('probe/one');
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, {
      wireCount: 1, wire: 'one-out', hasG: true, hasZ: true, closeCallbacks: true, inputCallback: true, expectedDoneCount: 1, configSymbols: 0, configKeys: one.body.configKeys, copied: one.body.configKeys,
    });
    const two = await api('probe/two');
    assert.equal(two.body.wireCount, 2);
    assert.equal(two.body.wire, null, 'no single-wire shortcut with two targets');
  });

  it('loads a module\'s sets in one module scope: state in a file two sets require is shared', async () => {
    await deploy(server, [...served('set', '/store/set', 'shape-store-set'), ...served('get', '/store/get', 'shape-store-get')], { api: 'v2', tab: TAB });
    assert.deepEqual((await api('store/set?v=kept')).body, { v: 'kept' });
    assert.deepEqual((await api('store/get')).body, { last: { v: 'kept' }, util: true });
  });

  it('GET /flows/state lists construction errors of the running configuration only', async () => {
    const failing = node('bad', 'shape-fail', [], { fail: true });
    await deploy(server, [failing], { api: 'v2', tab: TAB });
    let state = await api('flows/state');
    assert.deepEqual(state.body.errors, [{ id: 'bad', type: 'shape-fail', z: TAB, error: 'shape-fail bad refused to start' }]);
    await deploy(server, [{ ...failing, fail: false }], { api: 'v2', tab: TAB, type: 'nodes' });
    state = await api('flows/state');
    assert.equal(state.body.errors, undefined, 'redeployed fixed: its error is gone');
    await deploy(server, [failing], { api: 'v2', tab: TAB, type: 'flows' });
    assert.equal((await api('flows/state')).body.errors.length, 1);
    await deploy(server, [node('other', 'shape-fail')], { api: 'v2', tab: TAB, type: 'nodes' });
    assert.equal((await api('flows/state')).body.errors, undefined, 'removed: its error is gone');
    await deploy(server, [failing], { api: 'v2', tab: TAB });
    await deploy(server, [{ ...failing, d: true }], { api: 'v2', tab: TAB, type: 'full' });
    assert.equal((await api('flows/state')).body.errors, undefined, 'disabled: its error is gone');
  });

  it('logs a close handler that throws or reports failure at debug level only', async () => {
    await deploy(server, [node('closer', 'shape-close-throws')], { api: 'v2', tab: TAB });
    await deploy(server, [], { api: 'v2', tab: TAB });
    const lines = server.logs.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => /close handler (exploded|reported failure)/.test(l.msg));
    assert.equal(lines.length, 2, 'both failures are logged');
    assert.ok(lines.every((l) => l.level === 20), `logged at debug (20): ${JSON.stringify(lines)}`);
  });

  it('emits flows:* and runtime events with Node-RED\'s payloads around a deploy', async () => {
    await deploy(server, [node('keep', 'shape-probe'), node('change', 'shape-probe', [], { name: 'a' })], { api: 'v2', tab: TAB });
    assert.equal((await api('shape-probe/events', { method: 'DELETE' })).status, 204);
    const rev = await deploy(server, [node('keep', 'shape-probe'), node('change', 'shape-probe', [], { name: 'b' }), node('added', 'shape-probe')], { api: 'v2', tab: TAB, type: 'nodes' });
    const events = (await api('shape-probe/events')).body as Record<string, unknown>[];
    assert.deepEqual(
      events.map((e) => (e.name === 'runtime-event' ? `${e.id}:${e.state ?? ''}` : e.name)),
      ['flows:stopping', 'flows:stopped', 'runtime-state:stop', 'nodes-stopped', 'flows:starting', 'flows:started', 'nodes-started', 'runtime-state:start', 'runtime-deploy:'],
    );
    const started = events.find((e) => e.name === 'flows:started')!;
    assert.equal(started.type, 'nodes');
    assert.equal(started.rev, rev);
    assert.deepEqual(started.flowIds, [TAB, 'keep', 'change', 'added']);
    const diff = started.diff as Record<string, unknown>;
    assert.deepEqual(diff.added, ['added']);
    assert.ok((diff.changed as string[]).includes('change'));
    assert.ok(!(diff.changed as string[]).includes('keep'));
    assert.deepEqual(diff.removed, []);
    assert.equal(events.find((e) => e.name === 'flows:stopping')!.rev, rev, 'as in Node-RED, stopping already carries the new configuration');
  });

  it('on the shared root, an unserved path gets Express\'s 404 page but a wrong method on an admin API path stays JSON', async () => {
    const page = await api('no/such/path');
    assert.equal(page.status, 404);
    assert.match(page.text, /<pre>Cannot GET \/no\/such\/path<\/pre>/);
    for (const [method, p] of [['DELETE', 'auth/revoke'], ['PATCH', 'nodes/@scope/mod'], ['PUT', 'flows/state']]) {
      const res = await api(p, { method });
      assert.equal(res.status, 405, `${method} ${p}`);
      assert.equal(res.body.code, 'method_not_allowed', `${method} ${p}: ${res.text}`);
      assert.ok(res.headers.get('allow'), `${method} ${p}: Allow`);
    }
  });

  it('res.sendFile serves module assets with send: root, headers, ETag, ranges, conditional GETs, traversal refused', async () => {
    await deploy(server, [], { api: 'v2', tab: TAB });
    const file = await fetch(server.at('shape-probe/file/hello.txt'));
    assert.equal(file.status, 200);
    assert.equal(await file.text(), 'hello from a module asset\n');
    assert.match(file.headers.get('content-type')!, /^text\/plain; charset=utf-8$/i);
    assert.equal(file.headers.get('x-shape'), 'probe');
    assert.equal(file.headers.get('accept-ranges'), 'bytes');
    const etag = file.headers.get('etag');
    assert.ok(etag && file.headers.get('last-modified'));
    const range = await fetch(server.at('shape-probe/file/hello.txt'), { headers: { range: 'bytes=0-4' } });
    assert.equal(range.status, 206);
    assert.equal(await range.text(), 'hello');
    // fetch adds `Cache-Control: no-cache` to conditional requests unless told otherwise.
    const cached = await fetch(server.at('shape-probe/file/hello.txt'), { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
    assert.equal(cached.status, 304);
    assert.equal((await fetch(server.at('shape-probe/file/..%2f..%2fpackage.json'))).status, 403);
    const nope = await api('shape-probe/file/nope.txt');
    assert.equal(nope.status, 404, 'a missing file without callback goes to next: 404');
    assert.match(nope.text, /<pre>Error: Not Found<\/pre>/, 'Express\'s error page, without the file system path');
    assert.equal(await (await fetch(server.at('shape-probe/absolute'))).text(), 'hello from a module asset\n');
    const relative = await api('shape-probe/relative');
    assert.equal(relative.text, 'path must be absolute or specify root to res.sendFile');
    const missing = await api('shape-probe/missing');
    assert.equal(missing.status, 404);
    assert.equal(missing.text, 'callback: ENOENT');
    const download = await fetch(server.at('shape-probe/download'));
    assert.equal(download.headers.get('content-disposition'), 'attachment; filename="greeting.txt"');
    assert.equal(await download.text(), 'hello from a module asset\n');
    assert.deepEqual((await api('shape-probe/app')).body, { views: 'views', flag: true }, 'RED.httpNode keeps Express app settings');
    const render = await api('shape-probe/render');
    assert.equal(render.status, 501);
    assert.match(render.text, /No default engine was specified/);
  });

  it('loads node-red.plugins before the module\'s nodes and lists them in GET /plugins', async () => {
    const plugins = await api('plugins', { headers: { accept: 'application/json' } });
    assert.equal(plugins.status, 200);
    const mine = (plugins.body as { module: string }[]).filter((p) => p.module === 'node-red-contrib-shape-plugin');
    assert.deepEqual(mine, [
      {
        id: 'node-red-contrib-shape-plugin/shape-plugin', name: 'shape-plugin', enabled: true, local: true, user: true, module: 'node-red-contrib-shape-plugin',
        plugins: [{ id: 'shape-plugin', type: 'shape-library', module: 'node-red-contrib-shape-plugin' }], editor: true, runtime: true, version: '2.0.0',
      },
      {
        id: 'node-red-contrib-shape-plugin/shape-editor-only', name: 'shape-editor-only', enabled: true, local: true, user: true, module: 'node-red-contrib-shape-plugin',
        plugins: [], editor: true, runtime: false, version: '2.0.0',
      },
    ]);
    await deploy(server, [...served('uses', '/plugin', 'shape-uses-plugin')], { api: 'v2', tab: TAB });
    const res = await api('plugin?name=x');
    assert.deepEqual(res.body, { greeting: 'hello [object Object]', added: 1, byType: ['shape-plugin'], module: 'node-red-contrib-shape-plugin' });
  });

  it('removing a module forgets its plugins', async () => {
    await deploy(server, [], { api: 'v2', tab: TAB });
    assert.equal((await api('nodes/node-red-contrib-shape-plugin', { method: 'DELETE' })).status, 204);
    const plugins = await api('plugins', { headers: { accept: 'application/json' } });
    assert.deepEqual(plugins.body.filter((p: { module: string }) => p.module === 'node-red-contrib-shape-plugin'), []);
  });
});

describe('Node-RED modules npm installs as dependencies are loaded, at install and at start', { timeout: 180_000 }, () => {
  let work: string;
  let userDir: string;
  let widgetTgz: string;
  // The dependency stands in for a registry package as a local tarball (no registry here), which
  // uploaded modules may name only when the setting allows it.
  const LOCAL_DEPENDENCIES = { externalModules: { palette: { allowNonRegistryDependencies: true } } };

  before(async () => {
    work = await tempDir('runnel-deps-');
    userDir = await tempDir('runnel-deps-user-');
  });
  after(async () => {
    await removeDir(work);
    await removeDir(userDir);
  });

  it('installs a widget module whose dependency is a Node-RED module, runs both, keeps both after a restart, drops the dependency with it', async () => {
    const packs = path.join(work, 'packs');
    await mkdir(packs);
    const baseTgz = await npmPack(await copyShape('node-red-contrib-shape-base', work), packs);
    const widget = await copyShape('node-red-contrib-shape-widget', work);
    const manifest = JSON.parse(await readFile(path.join(widget, 'package.json'), 'utf8'));
    manifest.dependencies['node-red-contrib-shape-base'] = `file:${baseTgz}`;
    await writeFile(path.join(widget, 'package.json'), JSON.stringify(manifest));
    const widgetPacks = path.join(work, 'widget-pack');
    await mkdir(widgetPacks);
    widgetTgz = await npmPack(widget, widgetPacks);

    let server = await startServer(LOCAL_DEPENDENCIES, userDir);
    try {
      const form = new FormData();
      form.append('tarball', new Blob([await readFile(widgetTgz)], { type: 'application/x-compressed-tar' }), 'widget.tgz');
      const res = await fetch(server.at('nodes'), { method: 'POST', body: form });
      assert.equal(res.status, 200, await res.text());
      const base = await request(server.at('nodes/node-red-contrib-shape-base'));
      assert.equal(base.status, 200, 'the dependency is loaded after the install');
      assert.equal(base.body.nodes[0].loaded, true);
      const flows = [
        { id: TAB, type: 'tab', label: 'deps' },
        node('in', 'http in', [['w']], { url: '/chain', method: 'post' }),
        node('w', 'shape-widget', [['b']]),
        node('b', 'shape-base', [['out']]),
        node('out', 'http response'),
      ];
      assert.equal((await request(server.at('flows'), { method: 'POST', json: flows })).status, 204);
      const chain = await fetch(server.at('chain'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
      assert.equal(await chain.text(), 'base:widget:x');
    } finally {
      await server.stop();
    }

    server = await startServer(LOCAL_DEPENDENCIES, userDir);
    try {
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-base'))).status, 200, 'found in node_modules at start');
      assert.equal((await request(server.at('flows/state'))).body.state, 'start');
      const chain = await fetch(server.at('chain'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'y' });
      assert.equal(await chain.text(), 'base:widget:y');
      assert.equal((await request(server.at('flows'), { method: 'POST', json: [] })).status, 204);
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-base'), { method: 'DELETE' })).status, 400, 'a dependency is not the user\'s to remove');
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-widget'), { method: 'DELETE' })).status, 204);
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-base'))).status, 404, 'npm pruned the dependency: unloaded');
    } finally {
      await server.stop();
    }
  });

  it('installs by name a module already loaded as a dependency, which then stays when the module that needed it goes', async () => {
    const server = await startServer(LOCAL_DEPENDENCIES, userDir);
    try {
      const form = new FormData();
      form.append('tarball', new Blob([await readFile(widgetTgz)], { type: 'application/x-compressed-tar' }), 'widget.tgz');
      assert.equal((await fetch(server.at('nodes'), { method: 'POST', body: form })).status, 200);
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-base'))).status, 200);
      const own = await request(server.at('nodes'), { method: 'POST', json: { module: path.join(work, 'node-red-contrib-shape-base') } });
      assert.equal(own.status, 200, own.text);
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-widget'), { method: 'DELETE' })).status, 204);
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-base'))).status, 200, 'the user\'s own now');
      assert.equal((await request(server.at('nodes/node-red-contrib-shape-base'), { method: 'DELETE' })).status, 204);
    } finally {
      await server.stop();
    }
  });
});

describe('a module that throws in every hook cannot fail a deploy or the start-up', { timeout: 120_000 }, () => {
  let work: string;
  let userDir: string;
  before(async () => {
    work = await tempDir('runnel-hostile-');
    userDir = await tempDir('runnel-hostile-user-');
  });
  after(async () => {
    await removeDir(work);
    await removeDir(userDir);
  });

  it('installs, deploys every type, redeploys and restarts', async () => {
    const flows = [
      { id: TAB, type: 'tab', label: 'hostile' },
      node('h1', 'shape-hostile', [['h2']]),
      node('h2', 'shape-hostile', [], { inConstructor: true }),
      node('inject', 'inject', [['h1']], { once: true, onceDelay: 0, props: [{ p: 'payload' }], payload: 'x', payloadType: 'str' }),
    ];
    let server = await startServer({}, userDir);
    try {
      const res = await request(server.at('nodes'), { method: 'POST', json: { module: await copyShape('node-red-contrib-shape-hostile', work) } });
      assert.equal(res.status, 200, res.text);
      const sets = Object.fromEntries((res.body.nodes as { name: string; err?: string }[]).map((s) => [s.name, s.err]));
      assert.deepEqual(sets, { hostile: undefined, explodes: 'hostile set refuses to load' });
      for (const type of ['full', 'nodes', 'flows', 'reload']) {
        const deployed = await request(server.at('flows'), { method: 'POST', json: flows, headers: { 'node-red-deployment-type': type } });
        assert.equal(deployed.status, 204, `${type}: ${deployed.text}`);
      }
      const state = await request(server.at('flows/state'));
      assert.equal(state.body.state, 'start');
      assert.deepEqual(state.body.errors.map((e: { id: string }) => e.id), ['h2']);
      assert.ok(server.logs.some((l) => l.includes('a handler of the runtime event flows:started failed')), 'the failing handlers are reported');
    } finally {
      await server.stop();
    }
    server = await startServer({}, userDir);
    try {
      const state = await request(server.at('flows/state'));
      assert.equal(state.status, 200);
      assert.equal(state.body.state, 'start');
      assert.equal((await request(server.at('flows'))).body.length, flows.length);
      assert.equal((await request(server.at('flows'), { method: 'POST', json: flows })).status, 204);
    } finally {
      await server.stop();
    }
  });
});
