/**
 * Modules listed by function nodes: spec parsing, the installer (a tarball
 * made with `npm pack` here) and the deploy and start-up paths through a loopback package registry,
 * so npm never leaves 127.0.0.1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { captureLog } from '../helpers/log.js';
import {
  externalModulesDir,
  installModules,
  isInstallable,
  listedModules,
  splitSpec,
  type ModuleInstallOptions,
} from '../../src/registry/external-modules.js';
import type { SubflowDefinition } from '../../src/registry/registry.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { eventually, startServer, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { type Conf } from '../nodes/flow.js';
import { loopbackRegistry, packPad, PAD_PACKAGE, type LoopbackRegistry } from '../helpers/registry.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { deploy } from '../helpers/deploy.js';

const PKG = PAD_PACKAGE;

describe('module specs', () => {
  it('splits name, subpath and version as Node-RED does', () => {
    assert.deepEqual(splitSpec('lodash'), { spec: 'lodash', name: 'lodash', importPath: 'lodash' });
    assert.deepEqual(splitSpec('lodash@4'), { spec: 'lodash@4', name: 'lodash', importPath: 'lodash', version: '4' });
    assert.deepEqual(splitSpec('@scope/pkg/sub@^1.2'), { spec: '@scope/pkg/sub@^1.2', name: '@scope/pkg', importPath: '@scope/pkg/sub', version: '^1.2' });
    assert.deepEqual(splitSpec('node:fs'), { spec: 'node:fs', name: 'node:fs', importPath: 'node:fs' });
  });

  it('hands npm registry names with a range or tag only', () => {
    for (const ok of ['lodash', 'lodash@4', 'lodash@^4.17.0', '@scope/pkg@latest', 'lodash/fp@4']) assert.equal(isInstallable(splitSpec(ok)), true, ok);
    for (const bad of ['file:../x', 'lodash@file:../x', 'foo@npm:bar', '/tmp/x.tgz', './x', 'https://host/x.tgz', 'git+https://host/r.git', '-rf', 'lodash@', 'Bad Name']) {
      assert.equal(isInstallable(splitSpec(bad)), false, bad);
    }
  });
});

describe('listedModules', () => {
  it('collects enabled function nodes and subflow modules, one spec per package', () => {
    const fn = (id: string, modules: string[], extra: Conf = {}) => ({ id, type: 'function', libs: modules.map((module, i) => ({ var: `v${i}`, module })), ...extra });
    const defs: Record<string, SubflowDefinition> = {
      'sf-mod': { id: 'sf', type: 'subflow', flow: [fn('inner', ['dayjs', 'lodash@3'])] },
    };
    const nodes = [
      fn('a', ['lodash@4', 'lodash', '']),
      fn('off', ['moment'], { d: true }),
      fn('b', ['left-pad']),
      { id: 'i1', type: 'sf-mod' },
      { id: 'i2', type: 'sf-mod' },
      { id: 'c', type: 'change' },
    ];
    const seen: string[] = [];
    const specs = listedModules(nodes, (type) => {
      seen.push(type);
      return defs[type];
    });
    assert.deepEqual(specs.map((m) => m.spec), ['lodash@4', 'left-pad', 'dayjs']);
    assert.deepEqual(seen, ['sf-mod', 'change'], 'each type is looked up once');
  });
});

describe('settings', () => {
  it('defaults: modules may be listed and installed from anywhere', () => {
    const s = resolveSettings({});
    assert.equal(s.functionExternalModules, true);
    assert.deepEqual(s.externalModules.modules, { allowInstall: true, allowList: undefined, denyList: undefined, installTimeout: 300000 });
  });

  it('refuses malformed values with the key in the message', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ functionExternalModules: 'no' }, 'functionExternalModules must be true or false'],
      [{ externalModules: { modules: [] } }, 'externalModules.modules must be an object'],
      [{ externalModules: { modules: { allowInstall: 'yes' } } }, 'externalModules.modules.allowInstall must be true or false'],
      [{ externalModules: { modules: { denyList: 'x' } } }, 'externalModules.modules.denyList must be an array of strings'],
      [{ externalModules: { modules: { installTimeout: 0 } } }, 'externalModules.modules.installTimeout must be milliseconds between 1 and 3600000'],
    ];
    for (const [raw, message] of cases) assert.throws(() => resolveSettings(raw), { message });
  });
});

describe('external modules', { timeout: 240_000 }, () => {
  let work: string;
  let tgz: string;
  let registry: LoopbackRegistry;
  const saved = { registry: process.env.npm_config_registry, cache: process.env.npm_config_cache };

  before(async () => {
    work = await tempDir();
    tgz = await packPad(work);
    registry = await loopbackRegistry(await readFile(tgz));
    // Every npm this process spawns (runNpm passes the environment on) asks the loopback registry.
    process.env.npm_config_registry = registry.url;
    process.env.npm_config_cache = path.join(work, 'npm-cache');
  });

  after(async () => {
    process.env.npm_config_registry = saved.registry;
    process.env.npm_config_cache = saved.cache;
    if (saved.registry === undefined) delete process.env.npm_config_registry;
    if (saved.cache === undefined) delete process.env.npm_config_cache;
    await new Promise((resolve) => registry.server.close(resolve));
    await removeDir(work);
  });

  function logged(): { lines: () => Record<string, unknown>[]; options: (dir: string, timeoutMs?: number) => ModuleInstallOptions } {
    const { log, lines } = captureLog('info');
    return { lines, options: (dir, timeoutMs = 120_000) => ({ dir, timeoutMs, allowScripts: false, log }) };
  }

  describe('installModules', () => {
    it('installs a packed tarball into <userDir>/externalModules, a package of its own, and audits it', async () => {
      const userDir = await tempDir();
      try {
        const { lines, options } = logged();
        const dir = externalModulesDir(userDir);
        assert.deepEqual(await installModules([tgz], options(dir)), [{ spec: tgz }]);
        const manifest = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { private: boolean; dependencies: Record<string, string> };
        assert.equal(manifest.private, true);
        assert.deepEqual(Object.keys(manifest.dependencies), [PKG]);
        assert.equal(existsSync(path.join(dir, 'node_modules', PKG, 'index.js')), true);
        assert.equal(existsSync(path.join(userDir, 'node_modules')), false, 'the user dir is left alone');
        const audit = lines().filter((l) => l.level === 45).map(({ event, module, msg }) => ({ event, module, msg }));
        assert.deepEqual(audit, [{ event: 'modules.install', module: tgz, msg: 'function node module installed' }]);
      } finally {
        await removeDir(userDir);
      }
    });

    it('a spec npm cannot install is reported on its own and the others still install', async () => {
      const userDir = await tempDir();
      try {
        const { lines, options } = logged();
        const missing = path.join(work, 'no-such-package.tgz');
        const outcomes = await installModules([missing, tgz], options(externalModulesDir(userDir)));
        assert.equal(outcomes.length, 2);
        assert.equal(outcomes[0].spec, missing);
        assert.match(outcomes[0].error ?? '', /ENOENT|no such file/i);
        assert.deepEqual(outcomes[1], { spec: tgz });
        assert.equal(existsSync(path.join(externalModulesDir(userDir), 'node_modules', PKG, 'index.js')), true);
        assert.equal(lines().filter((l) => l.msg === 'installing function node modules one at a time to find the failing ones').length, 1);
        assert.equal(lines().filter((l) => l.level === 50 && l.module === missing).length, 1);
      } finally {
        await removeDir(userDir);
      }
    });

    it('kills npm at the time limit and reports every module of the run', async () => {
      const userDir = await tempDir();
      try {
        const { options } = logged();
        const dir = externalModulesDir(userDir);
        assert.deepEqual(await installModules([tgz], options(dir, 1)), [{ spec: tgz, error: 'npm did not finish within 1 ms' }]);
        assert.equal(existsSync(path.join(dir, 'node_modules', PKG)), false);
      } finally {
        await removeDir(userDir);
      }
    });
  });

  describe('deploy and start', () => {
    const tab = { id: 't1', type: 'tab', label: 'x' };
    const padder = (module: string, func = 'msg.payload = pad(msg.payload, 5, "*");\nreturn msg;'): Conf => ({
      id: 'pad', type: 'function', z: 't1', name: 'pad', x: 100, y: 100, wires: [['out']], func, outputs: 1, libs: [{ var: 'pad', module }],
    });
    const out = { id: 'out', type: 'test-capture', z: 't1', name: 'out', x: 200, y: 100, wires: [] };
    const npmRuns = (server: TestServer) => server.logs.filter((l) => l.includes('module(s) for function nodes')).length;

    async function seeded(): Promise<string> {
      const userDir = await tempDir();
      const { options } = logged();
      assert.deepEqual(await installModules([tgz], options(externalModulesDir(userDir))), [{ spec: tgz }]);
      return userDir;
    }

    /** What the deployed `pad` node made of one more message, after the ones before. */
    async function padded(server: TestServer, capture: Capture): Promise<unknown> {
      const count = capture.of('out').length + 1;
      server.instance.runtime.services.nodes.get('pad')!.receive({ payload: 'abc' });
      return (await capture.waitFor('out', count))[count - 1].payload;
    }

    it('a deploy installs the listed module before the node starts; the next deploy finds it installed', async () => {
      const server = await startServer();
      try {
        const capture = installCapture(server);
        const before = registry.requests.length;
        await deploy(server, [tab, padder(`${PKG}@1`), out]);
        // npm may take the tarball from its cache (the installer tests put it there); it must ask for the package.
        assert.equal(registry.requests.slice(before)[0], `/${PKG}`);
        const asked = registry.requests.length;
        assert.equal(await padded(server, capture), '**abc');
        const manifest = JSON.parse(await readFile(path.join(externalModulesDir(server.userDir), 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
        assert.deepEqual(Object.keys(manifest.dependencies), [PKG]);
        assert.ok(server.logs.some((l) => l.includes('"event":"modules.install"') && l.includes(`"module":"${PKG}@1"`)));

        await deploy(server, [tab, padder(PKG, 'msg.payload = pad(msg.payload, 6, "-");\nreturn msg;'), out]);
        assert.equal(await padded(server, capture), '---abc');
        assert.equal(npmRuns(server), 1);
        assert.equal(registry.requests.length, asked);
      } finally {
        await server.dispose();
      }
    });

    it('at start-up the stored flows get their modules before they start', async () => {
      const userDir = await tempDir();
      await writeFile(path.join(userDir, 'flows.json'), JSON.stringify([tab, padder(PKG), out]));
      const server = await startServer({}, userDir);
      try {
        assert.equal(existsSync(path.join(externalModulesDir(userDir), 'node_modules', PKG, 'index.js')), true);
        assert.ok(server.logs.some((l) => l.includes('"event":"modules.install"') && l.includes(`"module":"${PKG}"`)));
        // The stored flows wait for the test-capture type, which only now arrives.
        const capture = installCapture(server);
        await eventually(() => server.instance.runtime.services.nodes.get('pad'));
        assert.equal(await padded(server, capture), '**abc');
      } finally {
        await server.dispose();
      }
    });

    it('a module already in externalModules is imported from there without npm', async () => {
      const server = await startServer({}, await seeded());
      try {
        const capture = installCapture(server);
        const before = registry.requests.length;
        await deploy(server, [tab, padder(`${PKG}@1`), out]);
        assert.equal(await padded(server, capture), '**abc');
        assert.equal(npmRuns(server), 0);
        assert.equal(registry.requests.length, before);
      } finally {
        await server.dispose();
      }
    });

    it('a module the denyList refuses is neither installed nor imported, and the node says so', async () => {
      const server = await startServer({ externalModules: { modules: { denyList: ['runnel-fixture-*'] } } }, await seeded());
      try {
        const capture = installCapture(server);
        await deploy(server, [tab, padder(PKG), out]);
        await eventually(() => server.logs.some((l) => l.includes('"msg":"Function node failed to load external modules"')));
        assert.ok(server.logs.some((l) => l.includes(`"msg":"Failed to load module ${PKG}: Error: Module not allowed: ${PKG} (refused by externalModules.modules)"`)));
        assert.ok(server.logs.some((l) => l.includes(`"msg":"function node module ${PKG} is not allowed by externalModules.modules"`)));
        assert.equal(npmRuns(server), 0);
        server.instance.runtime.services.nodes.get('pad')!.receive({ payload: 'abc' });
        assert.deepEqual(capture.of('out'), []);
      } finally {
        await server.dispose();
      }
    });

    it('with allowInstall false a missing module is not installed and the node reports it', async () => {
      const server = await startServer({ externalModules: { modules: { allowInstall: false } } });
      try {
        installCapture(server);
        const before = registry.requests.length;
        await deploy(server, [tab, padder(PKG), out]);
        await eventually(() => server.logs.some((l) => l.includes(`"msg":"Failed to load module ${PKG}: Error`)));
        assert.ok(server.logs.some((l) => l.includes('"msg":"function node modules are missing and externalModules.modules.allowInstall is false"')));
        assert.equal(registry.requests.length, before);
        assert.equal(existsSync(externalModulesDir(server.userDir)), false);
      } finally {
        await server.dispose();
      }
    });

    it('URLs and paths in a flow reach neither npm nor import', async () => {
      const server = await startServer();
      try {
        installCapture(server);
        const data = 'data:text/javascript,export default process';
        await deploy(server, [tab, padder(data), out]);
        await eventually(() => server.logs.some((l) => l.includes(`"msg":"Failed to load module ${data}: Error: Module not allowed: ${data} (not a package name)"`)));
        await deploy(server, [tab, padder(tgz), out]);
        await eventually(() => server.logs.some((l) => l.includes(`"msg":"Failed to load module ${tgz}: Error: Module not allowed: ${tgz} (not a package name)"`)));
        assert.ok(server.logs.some((l) => l.includes(`"msg":"function node module ${tgz} is not installed: only registry names, with an optional version, are"`)));
        assert.equal(npmRuns(server), 0);
      } finally {
        await server.dispose();
      }
    });
  });
});
