import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';
import { packageRegistry, packPad, PAD_PACKAGE, type LoopbackRegistry } from '../helpers/registry.js';
import { copyFixture, npmPack } from './support.js';

/** Every entry under `dir` (links not followed) with a digest of what it holds: equal trees, equal maps. */
async function tree(dir: string, prefix = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = path.join(prefix, entry.name);
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) out.set(rel, `link ${await readlink(full)}`);
    else if (entry.isDirectory()) {
      out.set(rel, 'dir');
      for (const [k, v] of await tree(full, rel)) out.set(k, v);
    } else out.set(rel, createHash('sha256').update(await readFile(full)).digest('hex'));
  }
  return out;
}

interface Packed {
  manifest: { name: string; version: string; [key: string]: unknown };
  tgz: Buffer;
}

/** A tiny package packed with npm under `parent`: its package.json, an index.js and `files`. */
async function tinyPackage(parent: string, pkg: { name: string; [key: string]: unknown }, files: Record<string, string> = {}): Promise<Packed> {
  const dir = path.join(parent, pkg.name.replace('/', '-'));
  await mkdir(path.join(dir, 'packed'), { recursive: true });
  const manifest = { version: '1.0.0', license: 'Apache-2.0', ...pkg };
  await writeFile(path.join(dir, 'package.json'), JSON.stringify(manifest));
  await writeFile(path.join(dir, 'index.js'), 'module.exports = {};\n');
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  const tgz = await readFile(await npmPack(dir, path.join(dir, 'packed')));
  return { manifest, tgz };
}

const uses = { [PAD_PACKAGE]: '^1.0.0' };
const nodeSet = (name: string) => ({ 'node-red': { nodes: { [name]: 'node.js' } } });
const nodeJs = (type: string) => ({ 'node.js': `module.exports = (RED) => RED.nodes.registerType(${JSON.stringify(type)}, function (c) { RED.nodes.createNode(this, c); });\n` });

describe('a refused or failed module install leaves the user dir as it was', { timeout: 300_000 }, () => {
  let work: string;
  let registry: LoopbackRegistry;
  let server: TestServer;
  const saved = { registry: process.env.npm_config_registry, cache: process.env.npm_config_cache };

  let clash: Packed;

  before(async () => {
    work = await tempDir('runnel-rollback-');
    const served = [
      // Like @node-red/nodes: a scoped package with dependencies and no node-red section.
      await tinyPackage(work, { name: '@runnel-fixture/plain', dependencies: uses }),
      await tinyPackage(work, { name: 'node-red-contrib-needs-missing', dependencies: { ...uses, 'runnel-fixture-missing': '^1.0.0' }, ...nodeSet('nm') }, nodeJs('needs-missing')),
      await tinyPackage(work, { name: 'node-red-contrib-bad-script', dependencies: uses, scripts: { postinstall: 'node -e "process.exit(3)"' }, ...nodeSet('bs') }, nodeJs('bad-script')),
      await tinyPackage(work, { name: 'node-red-contrib-good', dependencies: uses, ...nodeSet('good') }, nodeJs('good-one')),
    ];
    clash = await tinyPackage(work, { name: 'node-red-contrib-clash', dependencies: uses, ...nodeSet('clash') }, nodeJs('upper-case'));
    const packages = Object.fromEntries(served.map((p) => [p.manifest.name, { [p.manifest.version]: p }]));
    registry = await packageRegistry({ [PAD_PACKAGE]: { '1.0.0': await readFile(await packPad(work)) }, ...packages });
    // Every npm this process spawns (runNpm passes the environment on) asks the loopback registry.
    process.env.npm_config_registry = registry.url;
    process.env.npm_config_cache = path.join(work, 'npm-cache');
    server = await startServer({ externalModules: { palette: { allowInstallScripts: true } } });
    // A user dir with a module installed already: its manifest, lock and node_modules must survive as they are.
    const installed = await request(server.at('nodes'), { method: 'POST', json: { module: await copyFixture('node-red-contrib-upper', work) } });
    assert.equal(installed.status, 200, installed.text);
  });

  after(async () => {
    await server?.dispose();
    for (const key of ['registry', 'cache'] as const) {
      if (saved[key] === undefined) delete process.env[`npm_config_${key}`];
      else process.env[`npm_config_${key}`] = saved[key];
    }
    await new Promise((resolve) => registry.server.close(resolve));
    await removeDir(work);
  });

  /** Runs the request and checks its answer, then that the user dir is byte for byte and entry for entry as before. */
  async function refusedLeavesNothing(post: () => Promise<{ status: number; body: any; text: string }>, status: number, code: string): Promise<void> {
    const before = await tree(server.userDir);
    const manifest = await readFile(path.join(server.userDir, 'package.json'), 'utf8');
    const lock = await readFile(path.join(server.userDir, 'package-lock.json'), 'utf8');
    const res = await post();
    assert.deepEqual([res.status, res.body?.code], [status, code], res.text);
    assert.equal(await readFile(path.join(server.userDir, 'package.json'), 'utf8'), manifest);
    assert.equal(await readFile(path.join(server.userDir, 'package-lock.json'), 'utf8'), lock);
    assert.deepEqual(await readdir(path.join(server.userDir, 'node_modules')), [...before.keys()].filter((k) => path.dirname(k) === 'node_modules').map((k) => path.basename(k)));
    assert.deepEqual(await tree(server.userDir), before);
  }

  const install = (module: string) => () => request(server.at('nodes'), { method: 'POST', json: { module } });

  it('a package without a node-red section (400 not_node_module): npm\'s dependencies and the new scope go too', async () => {
    await refusedLeavesNothing(install('@runnel-fixture/plain'), 400, 'not_node_module');
  });

  it('an uploaded module whose type another module registers (type_already_registered): the kept tarball\'s folder goes too', async () => {
    const form = () => {
      const f = new FormData();
      f.append('tarball', new Blob([clash.tgz], { type: 'application/x-compressed-tar' }), 'module.tgz');
      return f;
    };
    await refusedLeavesNothing(() => request(server.at('nodes'), { method: 'POST', body: form() }), 400, 'type_already_registered');
  });

  it('a dependency the registry does not have (npm fails: 404 not_found)', async () => {
    await refusedLeavesNothing(install('node-red-contrib-needs-missing'), 404, 'not_found');
  });

  it('an install script that fails after npm placed the packages (400 install_failed)', async () => {
    await refusedLeavesNothing(install('node-red-contrib-bad-script'), 400, 'install_failed');
  });

  it('the next install of a module with a registry dependency works', async () => {
    const res = await install('node-red-contrib-good')();
    assert.equal(res.status, 200, res.text);
    assert.ok((await readdir(path.join(server.userDir, 'node_modules'))).includes(PAD_PACKAGE));
  });
});
