import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, login, request, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import type { Node } from '../../src/runtime/flows/node.js';
import { copyFixture, npmPack, rawTarball, NODE_RED_PACKAGE } from '../registry/support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { adminAuth } from '../helpers/users.js';
import { deploy } from '../helpers/deploy.js';

const flow = (type: string) => [
  { id: 't1', type: 'tab', label: 'T' },
  { id: 'n1', type, z: 't1', x: 10, y: 10, wires: [['cap']] },
  { id: 'cap', type: 'test-capture', name: 'out', z: 't1', x: 20, y: 10, wires: [] },
];

function upload(file: Buffer, field = 'tarball'): FormData {
  const form = new FormData();
  form.append(field, new Blob([file], { type: 'application/x-compressed-tar' }), 'module.tgz');
  return form;
}

describe('nodes routes', { timeout: 120_000 }, () => {
  let server: TestServer;
  let token: string;
  let capture: Capture;
  let work: string;
  const api = (p: string, init: Parameters<typeof request>[1] = {}) => request(server.at(p), { token, ...init });
  const inject = (id: string, msg: Record<string, unknown>) => (server.instance.runtime.services.nodes.get(id) as Node).receive(msg);

  before(async () => {
    work = await tempDir('runnel-nodes-');
    server = await startServer({ adminAuth: adminAuth() });
    token = await login(server);
    capture = installCapture(server);
  });
  after(async () => {
    await server.dispose();
    await removeDir(work);
  });

  it('lists the built-in sets', async () => {
    const res = await api('nodes', { headers: { accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.ok(res.body.some((s: { id: string; module: string }) => s.id === 'node-red/inject' && s.module === 'node-red'));
  });

  it('installs a module from a directory and runs its type in a deployed flow', async () => {
    const dir = await copyFixture('node-red-contrib-upper', work, 'upper-v1');
    const res = await api('nodes', { method: 'POST', json: { module: dir } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      name: 'node-red-contrib-upper',
      version: '1.0.0',
      local: true,
      user: true,
      path: path.join(server.userDir, 'node_modules', 'node-red-contrib-upper'),
      plugins: [],
      nodes: [
        { id: 'node-red-contrib-upper/upper', name: 'upper', types: ['upper-case'], enabled: true, loaded: true, local: true, user: true, module: 'node-red-contrib-upper', version: '1.0.0' },
      ],
    });
    const manifest = JSON.parse(await readFile(path.join(server.userDir, 'package.json'), 'utf8'));
    assert.ok(manifest.dependencies['node-red-contrib-upper'], 'recorded in the user dir package.json');
    await deploy(server, flow('upper-case'), { token });
    inject('n1', { payload: 'hello' });
    const [msg] = await capture.waitFor('out');
    assert.equal(msg.payload, 'HELLO');
    assert.equal(msg.note, 'upper-cased by v1', 'RED._ reads locales/en-US/upper.json');
  });

  it('refuses installing the same module again', async () => {
    const dir = path.join(work, 'upper-v1');
    const res = await api('nodes', { method: 'POST', json: { module: dir } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'module_already_loaded');
  });

  it('refuses a module whose type another module registered, leaving nothing installed', async () => {
    const res = await api('nodes', { method: 'POST', json: { module: await copyFixture('dup-nodes', work) } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'type_already_registered');
    assert.equal((await api('nodes/node-red-contrib-dup')).status, 404);
    const manifest = JSON.parse(await readFile(path.join(server.userDir, 'package.json'), 'utf8'));
    assert.equal(manifest.dependencies['node-red-contrib-dup'], undefined);
    await assert.rejects(readFile(path.join(server.userDir, 'node_modules', 'node-red-contrib-dup', 'package.json')));
  });

  it('refuses to disable or remove a module while deployed nodes use it, and built-in modules', async () => {
    const off = await api('nodes/node-red-contrib-upper/upper', { method: 'PUT', json: { enabled: false } });
    assert.equal(off.status, 400);
    assert.deepEqual(off.body, { code: 'type_in_use', message: 'Type in use: upper-case' });
    const offModule = await api('nodes/node-red-contrib-upper', { method: 'PUT', json: { enabled: false } });
    assert.equal(offModule.body.code, 'type_in_use');
    const del = await api('nodes/node-red-contrib-upper', { method: 'DELETE' });
    assert.equal(del.status, 400);
    assert.equal(del.body.code, 'type_in_use');
    const core = await api('nodes/node-red', { method: 'DELETE' });
    assert.equal(core.status, 400);
    assert.equal(core.body.code, 'module_not_removable');
  });

  it('upgrades a module in place: deployed nodes restart with the new code', async () => {
    const dir = await copyFixture('node-red-contrib-upper', work, 'upper-v2');
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version: '2.0.0' }));
    const code = await readFile(path.join(dir, 'upper.js'), 'utf8');
    await writeFile(path.join(dir, 'upper.js'), code.replace("version: '1'", "version: '2'"));
    const res = await api('nodes', { method: 'POST', json: { module: dir } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.version, '2.0.0');
    assert.equal(res.body.nodes[0].loaded, true);
    await eventually(() => server.instance.runtime.services.nodes.get('n1'));
    const before = capture.of('out').length;
    inject('n1', { payload: 'again' });
    const msgs = await capture.waitFor('out', before + 1);
    assert.equal(msgs.at(-1)!.note, 'upper-cased by v2');
  });

  it('disables, enables and removes a module once no deployed node uses it', async () => {
    await deploy(server, [{ id: 't1', type: 'tab', label: 'T' }], { token });
    const off = await api('nodes/node-red-contrib-upper/upper', { method: 'PUT', json: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.enabled, false);
    assert.equal(server.instance.runtime.registry.isKnownType('upper-case'), false);
    const on = await api('nodes/node-red-contrib-upper', { method: 'PUT', json: { enabled: true } });
    assert.equal(on.status, 200);
    assert.equal(on.body.nodes[0].enabled, true);
    const del = await api('nodes/node-red-contrib-upper', { method: 'DELETE' });
    assert.equal(del.status, 204);
    assert.equal((await api('nodes/node-red-contrib-upper')).status, 404);
    assert.equal(server.instance.runtime.registry.isKnownType('upper-case'), false);
    const manifest = JSON.parse(await readFile(path.join(server.userDir, 'package.json'), 'utf8'));
    assert.equal(manifest.dependencies?.['node-red-contrib-upper'], undefined);
  });

  it('installs an npm pack tarball and starts a flow that was waiting for its type', async () => {
    await deploy(server, flow('esm-double'), { token });
    assert.deepEqual((await api('flows/state')).body.missingTypes, ['esm-double']);
    const src = await copyFixture('esm-nodes', work);
    const packDir = path.join(work, 'pack-esm');
    await mkdir(packDir);
    const tgz = await readFile(await npmPack(src, packDir));
    const res = await api('nodes', { method: 'POST', body: upload(tgz) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, '@runnel-test/esm-nodes');
    assert.deepEqual(res.body.nodes[0].types, ['esm-double']);
    const scoped = await api('nodes/@runnel-test/esm-nodes');
    assert.equal(scoped.status, 200);
    assert.equal(scoped.body.version, '0.2.0');
    await eventually(() => server.instance.runtime.services.nodes.get('n1'));
    const before = capture.of('out').length;
    inject('n1', { payload: 21 });
    const msgs = await capture.waitFor('out', before + 1);
    assert.equal(msgs.at(-1)!.payload, 42);
    const kept = path.join(server.userDir, 'nodes', 'runnel-test-esm-nodes-0.2.0.tgz');
    assert.equal((await readFile(kept)).length, tgz.length, 'the upload is kept for npm while installed');
    await deploy(server, [{ id: 't1', type: 'tab', label: 'T' }], { token });
    assert.equal((await api('nodes/@runnel-test/esm-nodes', { method: 'DELETE' })).status, 204);
    await assert.rejects(readFile(kept), { code: 'ENOENT' });
    assert.equal(server.instance.runtime.registry.isKnownType('esm-double'), false);
  });

  it('installs a module whose node file is an ES module only by its folder\'s package.json, and runs it', async () => {
    const res = await api('nodes', { method: 'POST', json: { module: await copyFixture('esm-nested-nodes', work) } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.nodes.map((s: { types: string[]; loaded: boolean }) => [s.types, s.loaded]), [[['esm-triple'], true]]);
    await deploy(server, flow('esm-triple'), { token });
    const before = capture.of('out').length;
    inject('n1', { payload: 5 });
    const msgs = await capture.waitFor('out', before + 1);
    assert.equal(msgs.at(-1)!.payload, 15);
    await deploy(server, [{ id: 't1', type: 'tab', label: 'T' }], { token });
    assert.equal((await api('nodes/node-red-contrib-esm-nested', { method: 'DELETE' })).status, 204);
  });

  it('reports a set whose code throws and still loads the module', async () => {
    const res = await api('nodes', { method: 'POST', json: { module: await copyFixture('broken-nodes', work) } });
    assert.equal(res.status, 200, res.text);
    const bad = res.body.nodes.find((s: { name: string }) => s.name === 'bad');
    assert.equal(bad.loaded, false);
    assert.equal(bad.err, 'bad set exploded');
    const list = await api('nodes');
    assert.equal(list.body.find((s: { id: string }) => s.id === 'node-red-contrib-broken/good').loaded, true);
  });

  it('refuses bad uploads with a code naming the problem', async () => {
    const cases: [Buffer, string][] = [
      [Buffer.from('plain text, not gzip'), 'tarball_not_gzip'],
      [rawTarball([{ path: 'package/package.json', body: JSON.stringify({ name: 'plain', version: '1.0.0' }) }]), 'not_node_module'],
      [rawTarball([{ path: 'package/package.json', body: NODE_RED_PACKAGE }, { path: 'package/../../x.js', body: 'x' }]), 'tarball_path_traversal'],
      [rawTarball([{ path: 'package/package.json', body: NODE_RED_PACKAGE }, { path: '/tmp/x.js', body: 'x' }]), 'tarball_absolute_path'],
      [rawTarball([{ path: 'package/package.json', body: NODE_RED_PACKAGE }, { path: 'package/l', type: 'SymbolicLink', linkpath: '../../etc' }]), 'tarball_link_outside'],
    ];
    for (const [body, code] of cases) {
      const res = await api('nodes', { method: 'POST', body: upload(body) });
      assert.equal(res.status, 400, `${code}: ${res.text}`);
      assert.equal(res.body.code, code);
    }
    const wrongField = await api('nodes', { method: 'POST', body: upload(Buffer.from('x'), 'file') });
    assert.equal(wrongField.status, 400);
    assert.equal(wrongField.body.code, 'unexpected_field');
  });

  it('refuses invalid module fields and missing modules', async () => {
    for (const module of ['node-red-contrib-upper@1.0.0', 'https://example.com/x.tgz', '/tmp/module.tgz', 'Bad Name!', 'git+ssh://host/repo']) {
      const res = await api('nodes', { method: 'POST', json: { module } });
      assert.equal(res.status, 400, module);
      assert.equal(res.body.code, 'invalid_module_name', module);
    }
    const empty = await api('nodes', { method: 'POST', json: {} });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.code, 'invalid_request');
    const noSection = path.join(work, 'plain');
    await mkdir(noSection);
    await writeFile(path.join(noSection, 'package.json'), JSON.stringify({ name: 'plain', version: '1.0.0' }));
    const plain = await api('nodes', { method: 'POST', json: { module: noSection } });
    assert.equal(plain.status, 400);
    assert.equal(plain.body.code, 'not_node_module');
    const unknown = await api('nodes/not-installed');
    assert.deepEqual(unknown.body.code, 'not_found');
    assert.equal(unknown.status, 404);
    assert.equal((await api('nodes/not-installed/x', { method: 'PUT', json: { enabled: false } })).status, 404);
  });

  it('needs nodes.write to install', async () => {
    const readerToken = await login(server, 'reader', 'reader-password-1', 'read');
    const res = await request(server.at('nodes'), { method: 'POST', token: readerToken, json: { module: path.join(work, 'upper-v1') } });
    // The guard answers 401 for a token without the permission, as Node-RED does.
    assert.equal(res.status, 401);
    assert.equal(server.instance.runtime.registry.modules.has('node-red-contrib-upper'), false);
  });
});

describe('nodes routes: settings and persistence', { timeout: 120_000 }, () => {
  let work: string;
  before(async () => {
    work = await tempDir('runnel-nodes-');
  });
  after(() => removeDir(work));

  it('honours allowInstall, allowLocalPaths, the deny list and the upload size limit', async () => {
    const dir = await copyFixture('node-red-contrib-upper', work);
    const cases: [Record<string, unknown>, string][] = [
      [{ allowInstall: false }, 'install_not_allowed'],
      [{ allowLocalPaths: false }, 'local_path_not_allowed'],
      [{ denyList: ['node-red-contrib-*'] }, 'install_not_allowed'],
      [{ allowList: ['@runnel-test/*'] }, 'install_not_allowed'],
    ];
    for (const [palette, code] of cases) {
      const server = await startServer({ externalModules: { palette } });
      try {
        const res = await request(server.at('nodes'), { method: 'POST', json: { module: dir } });
        assert.equal(res.status, 403, JSON.stringify(palette));
        assert.equal(res.body.code, code);
      } finally {
        await server.dispose();
      }
    }
    const small = await startServer({ externalModules: { palette: { maxUploadSize: 1024 } } });
    try {
      const res = await request(small.at('nodes'), { method: 'POST', body: upload(Buffer.alloc(4096, 1)) });
      assert.equal(res.status, 413);
      assert.equal(res.body.code, 'payload_too_large');
    } finally {
      await small.dispose();
    }
  });

  it("honours Node-RED's deprecated editorTheme.palette.editable and .upload, and GET /settings says so", async () => {
    const dir = await copyFixture('node-red-contrib-upper', work);
    const cases: [Record<string, unknown>, string, { allowInstall: boolean; allowUpload: boolean }][] = [
      [{ editable: false }, 'install_not_allowed', { allowInstall: false, allowUpload: false }],
      [{ upload: false }, 'upload_not_allowed', { allowInstall: true, allowUpload: false }],
    ];
    for (const [palette, code, advertised] of cases) {
      const server = await startServer({ editorTheme: { palette } });
      try {
        const res = await request(server.at('nodes'), { method: 'POST', body: upload(Buffer.alloc(64, 1)) });
        assert.equal(res.status, 403, JSON.stringify(palette));
        assert.equal(res.body.code, code);
        if (!advertised.allowInstall) assert.equal((await request(server.at('nodes'), { method: 'POST', json: { module: dir } })).body.code, code);
        const { palette: shown } = (await request(server.at('settings'))).body.externalModules;
        assert.deepEqual({ allowInstall: shown.allowInstall, allowUpload: shown.allowUpload }, advertised);
      } finally {
        await server.dispose();
      }
    }
  });

  it('loads installed modules with their enabled flags after a restart', async () => {
    const userDir = await tempDir('runnel-nodes-user-');
    const first = await startServer({}, userDir);
    try {
      const dir = await copyFixture('broken-nodes', work);
      assert.equal((await request(first.at('nodes'), { method: 'POST', json: { module: dir } })).status, 200);
      assert.equal((await request(first.at('nodes/node-red-contrib-broken/good'), { method: 'PUT', json: { enabled: false } })).status, 200);
    } finally {
      await first.stop();
    }
    const second = await startServer({}, userDir);
    try {
      const res = await request(second.at('nodes/node-red-contrib-broken'));
      assert.equal(res.status, 200);
      const sets = Object.fromEntries(res.body.nodes.map((s: { name: string }) => [s.name, s]));
      assert.equal(sets.good.enabled, false);
      assert.equal(sets.good.loaded, false);
      assert.equal(sets.bad.err, 'bad set exploded');
    } finally {
      await second.dispose();
    }
  });
});
