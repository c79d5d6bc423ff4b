import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadModule, loadModules, modulesIn, unloadModule } from '../../src/registry/loader.js';
import { copyFixture, fakeRuntime } from './support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';

describe('loadModule', { timeout: 30_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => removeDir(dir));

  it('loads a CommonJS module: set id, registered types, loaded flag, locales', async () => {
    const runtime = fakeRuntime(dir);
    const moduleDir = await copyFixture('node-red-contrib-upper', dir, 'cjs-upper');
    const { module, conflicts } = await loadModule(runtime, moduleDir);
    assert.deepEqual(conflicts, []);
    assert.equal(module.name, 'node-red-contrib-upper');
    assert.equal(module.version, '1.0.0');
    const set = module.sets.get('upper')!;
    assert.equal(set.id, 'node-red-contrib-upper/upper');
    assert.deepEqual(set.types, ['upper-case']);
    assert.equal(set.loaded, true);
    assert.equal(set.err, undefined);
    assert.equal(runtime.registry.isKnownType('upper-case'), true);
  });

  it('unwraps the default export of an ES module', async () => {
    const runtime = fakeRuntime(dir);
    const { module } = await loadModule(runtime, await copyFixture('esm-nodes', dir));
    assert.equal(module.name, '@runnel-test/esm-nodes');
    assert.deepEqual(module.sets.get('double')!.types, ['esm-double']);
    assert.equal(module.sets.get('double')!.loaded, true);
  });

  it('imports a node file that is an ES module by its own folder\'s package.json, top-level await and all, as Node-RED 5 does', async () => {
    const runtime = fakeRuntime(dir);
    const { module } = await loadModule(runtime, await copyFixture('esm-nested-nodes', dir));
    const set = module.sets.get('triple')!;
    assert.equal(set.err, undefined);
    assert.equal(set.loaded, true);
    assert.deepEqual(set.types, ['esm-triple']);
  });

  it('records a failing set in err and still loads the other sets', async () => {
    const runtime = fakeRuntime(dir);
    const { module } = await loadModule(runtime, await copyFixture('broken-nodes', dir));
    const good = module.sets.get('good')!;
    const bad = module.sets.get('bad')!;
    assert.equal(good.loaded, true);
    assert.deepEqual(good.types, ['broken-good']);
    assert.equal(bad.loaded, false);
    assert.equal(bad.err, 'bad set exploded');
    assert.deepEqual(bad.types, ['broken-bad'], 'the .html declaration stays visible');
    assert.equal(runtime.registry.isKnownType('broken-bad'), false, 'a failed set provides no types');
  });

  it('refuses a module whose node-red version range excludes the presented version', async () => {
    const runtime = fakeRuntime(dir);
    await assert.rejects(loadModule(runtime, await copyFixture('future-nodes', dir)), { code: 'node_red_version_unsupported', status: 400 });
    assert.equal(runtime.registry.modules.has('node-red-contrib-future'), false);
  });

  it('reports a type another module already registered, leaving the first owner intact', async () => {
    const runtime = fakeRuntime(dir);
    await loadModule(runtime, await copyFixture('node-red-contrib-upper', dir, 'owner'));
    const { module, conflicts } = await loadModule(runtime, await copyFixture('dup-nodes', dir));
    assert.deepEqual(conflicts, [{ type: 'upper-case', module: 'node-red-contrib-upper' }]);
    assert.equal(module.sets.get('dup')!.err, 'upper-case already registered');
    assert.equal(runtime.registry.getTypeSet('upper-case')!.module, 'node-red-contrib-upper');
    assert.equal(runtime.registry.isKnownType('dup-own'), false);
  });

  it('does not run the code of a disabled set but shows its declared types', async () => {
    const runtime = fakeRuntime(dir);
    const { module } = await loadModule(runtime, await copyFixture('node-red-contrib-upper', dir, 'disabled'), { upper: false });
    const set = module.sets.get('upper')!;
    assert.equal(set.enabled, false);
    assert.equal(set.loaded, false);
    assert.deepEqual(set.types, ['upper-case']);
    assert.equal(runtime.registry.getTypeSet('upper-case'), undefined);
  });

  it('runs new code after an unload and reload (no stale require cache)', async () => {
    const runtime = fakeRuntime(dir);
    const moduleDir = await copyFixture('node-red-contrib-upper', dir, 'reloaded');
    await loadModule(runtime, moduleDir);
    await unloadModule(runtime, runtime.registry.modules.get('node-red-contrib-upper')!);
    assert.equal(runtime.registry.isKnownType('upper-case'), false);
    await writeFile(
      path.join(moduleDir, 'upper.js'),
      `module.exports = function (RED) { RED.nodes.registerType('upper-case-v2', function (c) { RED.nodes.createNode(this, c); }); };`,
    );
    const { module } = await loadModule(runtime, moduleDir);
    assert.deepEqual(module.sets.get('upper')!.types, ['upper-case-v2']);
    assert.equal(runtime.registry.isKnownType('upper-case'), false);
  });
});

describe('loadModules and modulesIn', { timeout: 30_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => removeDir(dir));

  it('finds modules in a nodesDir and loads dependencies first, skipping modules that fail', async () => {
    const nodesDir = path.join(dir, 'nodes');
    await copyFixture('dep-nodes', nodesDir);
    await copyFixture('node-red-contrib-upper', nodesDir);
    await copyFixture('future-nodes', nodesDir);
    await copyFixture('esm-nodes', path.join(nodesDir, '@scope'));
    const dirs = await modulesIn(nodesDir);
    assert.equal(dirs.length, 4);
    const runtime = fakeRuntime(dir);
    const order: string[] = [];
    runtime.registry.on('type-registered', (t: string) => order.push(t));
    await loadModules(runtime, dirs.sort());
    assert.ok(order.indexOf('upper-case') < order.indexOf('dep-node'), `upper before dep: ${order.join(',')}`);
    assert.deepEqual([...runtime.registry.modules.keys()].sort(), ['@runnel-test/esm-nodes', 'node-red-contrib-dep', 'node-red-contrib-upper']);
  });

  it('treats a nodesDir that is itself a module as one module', async () => {
    const moduleDir = await copyFixture('node-red-contrib-upper', dir, 'single');
    assert.deepEqual(await modulesIn(moduleDir), [moduleDir]);
  });
});
