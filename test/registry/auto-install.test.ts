/**
 * Node-RED's `externalModules.autoInstall`: a user dir whose `.config.nodes.json` lists a module
 * its `node_modules` lacks (a container image without `node_modules`) gets it installed after the
 * start, from the configured registry (a loopback one here), and the flows waiting for its types
 * run; a failed install is retried on Node-RED's schedule (`autoInstallRetry`, doubling every five
 * attempts), waited for on the test's clock.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/base/clock.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { packageRegistry, type LoopbackRegistry, type RegistryPackages } from '../helpers/registry.js';
import { eventually, request, startServer } from '../helpers/server.js';
import { copyFixture, npmPack } from './support.js';

const UPPER = 'node-red-contrib-upper';
const NODE_RED_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/node-red/config-nodes.json');

/** A clock whose waits the test ends: each wait's length is kept, `release` ends the current one. */
function heldClock(): Clock & { waits: number[]; release(): void } {
  let pending: (() => void) | undefined;
  const waits: number[] = [];
  return {
    waits,
    now: () => Date.now(),
    sleep: (ms) => {
      waits.push(ms);
      return new Promise<void>((resolve) => {
        pending = resolve;
      });
    },
    release: () => pending?.(),
  };
}

describe('autoInstall settings', () => {
  it("reads Node-RED's keys and their deprecated top-level forms, and refuses wrong types", () => {
    const auto = (raw: Record<string, unknown>) => {
      const { autoInstall, autoInstallRetry } = resolveSettings(raw).externalModules;
      return { autoInstall, autoInstallRetry };
    };
    assert.deepEqual(auto({}), { autoInstall: false, autoInstallRetry: 30_000 });
    assert.deepEqual(auto({ externalModules: { autoInstall: true, autoInstallRetry: 5 } }), { autoInstall: true, autoInstallRetry: 5000 });
    assert.deepEqual(auto({ autoInstallModules: true, autoInstallModulesRetry: 2000 }), { autoInstall: true, autoInstallRetry: 2000 });
    assert.throws(() => resolveSettings({ externalModules: { autoInstall: 'yes' } }), { message: 'externalModules.autoInstall must be true or false' });
    assert.throws(() => resolveSettings({ externalModules: { autoInstallRetry: 0 } }), { message: 'externalModules.autoInstallRetry must be seconds between 1 and 86400' });
  });
});

describe('externalModules.autoInstall', { timeout: 300_000 }, () => {
  let work: string;
  let registry: LoopbackRegistry;
  let upperTgz: Buffer;
  const packages: RegistryPackages = {};
  const caches: string[] = [];
  const saved = { registry: process.env.npm_config_registry, cache: process.env.npm_config_cache };

  before(async () => {
    work = await tempDir('runnel-auto-install-');
    const dest = path.join(work, 'packed');
    await mkdir(dest);
    upperTgz = await readFile(await npmPack(await copyFixture(UPPER, work), dest));
    registry = await packageRegistry(packages);
    // Every npm this process spawns (runNpm passes the environment on) asks the loopback registry.
    process.env.npm_config_registry = registry.url;
  });

  after(async () => {
    for (const key of ['registry', 'cache'] as const) {
      if (saved[key] === undefined) delete process.env[`npm_config_${key}`];
      else process.env[`npm_config_${key}`] = saved[key];
    }
    await new Promise((resolve) => registry.server.close(resolve));
    await Promise.all([work, ...caches].map(removeDir));
  });

  /** A Node-RED user dir without node_modules: its .config.nodes.json lists upper (enabled), its flow uses upper-case. */
  async function userDirWithoutModules(): Promise<string> {
    const userDir = await tempDir('runnel-auto-install-ud-');
    // A fresh npm cache: what one test's install cached must not answer for the registry in the next.
    process.env.npm_config_cache = await tempDir('runnel-auto-install-cache-');
    caches.push(process.env.npm_config_cache);
    const listed = JSON.parse(await readFile(NODE_RED_FILE, 'utf8')) as Record<string, { nodes: Record<string, { enabled: boolean }> }>;
    listed[UPPER].nodes.upper.enabled = true;
    await writeFile(path.join(userDir, '.config.nodes.json'), JSON.stringify(listed, null, 4));
    await writeFile(path.join(userDir, 'flows.json'), JSON.stringify([
      { id: 't1', type: 'tab', label: 'Flow 1' },
      { id: 'in', type: 'http in', z: 't1', url: '/up', method: 'post', x: 100, y: 100, wires: [['u']] },
      { id: 'u', type: 'upper-case', z: 't1', x: 200, y: 100, wires: [['out']] },
      { id: 'out', type: 'http response', z: 't1', x: 300, y: 100, wires: [] },
    ]));
    return userDir;
  }

  const shout = async (server: { at(p: string): string }) => {
    const res = await fetch(server.at('up'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    return res.status === 200 ? await res.text() : res.status;
  };

  it('installs the modules .config.nodes.json lists and node_modules lacks, and the flows waiting for their types run', async () => {
    packages[UPPER] = { '1.0.0': upperTgz };
    const userDir = await userDirWithoutModules();
    const server = await startServer({ externalModules: { autoInstall: true } }, userDir);
    try {
      assert.equal(await eventually(async () => ((await shout(server)) === 'HELLO' ? 'HELLO' : undefined), 120_000), 'HELLO');
      // The flow runs once the types register; the install then records the module.
      await server.instance.runtime.modules.run(async () => undefined);
      assert.equal((await request(server.at(`nodes/${UPPER}`))).body.version, '1.0.0');
      const manifest = JSON.parse(await readFile(path.join(userDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
      assert.ok(manifest.dependencies[UPPER], 'installed as the palette installs: saved in the user dir package.json');
      const editor = await request(server.at('settings'));
      assert.equal(editor.body.externalModules.autoInstall, true);
    } finally {
      await server.dispose();
      delete packages[UPPER];
    }
  });

  it('retries a failed install after autoInstallRetry seconds, waiting twice as long from the fifth retry', async () => {
    const userDir = await userDirWithoutModules();
    const clock = heldClock();
    const server = await startServer({ externalModules: { autoInstall: true, autoInstallRetry: 5 } }, userDir, { clock });
    try {
      for (let attempt = 1; attempt <= 5; attempt++) {
        await eventually(() => clock.waits.length === attempt || undefined, 60_000);
        if (attempt < 5) clock.release();
      }
      assert.deepEqual(clock.waits, [5000, 5000, 5000, 5000, 10000]);
      assert.equal((await request(server.at(`nodes/${UPPER}`))).status, 404);
      assert.equal(await shout(server), 404, 'the flow waits for upper-case');
      packages[UPPER] = { '1.0.0': upperTgz };
      clock.release();
      assert.equal(await eventually(async () => ((await shout(server)) === 'HELLO' ? 'HELLO' : undefined), 120_000), 'HELLO');
      await server.instance.runtime.modules.run(async () => undefined);
      assert.equal(clock.waits.length, 5, 'no wait after the install succeeded');
    } finally {
      await server.dispose();
      delete packages[UPPER];
    }
  });

  it('installs nothing without autoInstall', async () => {
    const userDir = await userDirWithoutModules();
    const asked = registry.requests.length;
    const server = await startServer({}, userDir);
    try {
      assert.equal((await request(server.at(`nodes/${UPPER}`))).status, 404);
      assert.equal(registry.requests.length, asked, 'the registry was not asked');
      assert.equal(existsSync(path.join(userDir, 'node_modules')), false);
    } finally {
      await server.dispose();
    }
  });
});
