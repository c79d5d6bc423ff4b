/**
 * `externalModules.palette.allowList` / `denyList` as Node-RED 4.1 applies them: to installs by
 * name (the version the registry resolves checked against `@range` rules), from a path and by
 * upload, and to the modules a user dir already has at start; GET /settings gives the editor only
 * the lists the settings give.
 */
import assert from 'node:assert/strict';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { packageRegistry, type LoopbackRegistry } from '../helpers/registry.js';
import { request, startServer } from '../helpers/server.js';
import { copyFixture, npmPack } from './support.js';

const UPPER = 'node-red-contrib-upper';

describe('palette allowList and denyList', { timeout: 240_000 }, () => {
  let work: string;
  let registry: LoopbackRegistry;
  const saved = { registry: process.env.npm_config_registry, cache: process.env.npm_config_cache };

  /** The upper fixture at `version`, as a directory. */
  const upperAt = async (version: string) => {
    const dir = await copyFixture(UPPER, work, `upper-${version}-${Math.random().toString(36).slice(2)}`);
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
    return dir;
  };

  before(async () => {
    work = await tempDir('runnel-palette-lists-');
    const packed: Record<string, Buffer> = {};
    for (const version of ['1.0.0', '2.0.0']) {
      const dest = path.join(work, `packed-${version}`);
      await mkdir(dest);
      packed[version] = await readFile(await npmPack(await upperAt(version), dest));
    }
    registry = await packageRegistry({ [UPPER]: packed });
    // Every npm this process spawns (runNpm passes the environment on) asks the loopback registry.
    process.env.npm_config_registry = registry.url;
    process.env.npm_config_cache = path.join(work, 'npm-cache');
  });

  after(async () => {
    for (const key of ['registry', 'cache'] as const) {
      if (saved[key] === undefined) delete process.env[`npm_config_${key}`];
      else process.env[`npm_config_${key}`] = saved[key];
    }
    await new Promise((resolve) => registry.server.close(resolve));
    await removeDir(work);
  });

  const install = async (palette: Record<string, unknown>, body: Record<string, unknown>) => {
    const server = await startServer({ externalModules: { palette } });
    try {
      const res = await request(server.at('nodes'), { method: 'POST', json: body });
      return { status: res.status, code: res.body?.code as string | undefined, version: res.body?.version as string | undefined };
    } finally {
      await server.dispose();
    }
  };

  it('the more specific rule wins over a wildcard in the other list, for a module installed from a path', async () => {
    const dir = await upperAt('1.0.0');
    assert.deepEqual(await install({ allowList: [UPPER], denyList: ['*'] }, { module: dir }), { status: 200, code: undefined, version: '1.0.0' });
    assert.deepEqual(await install({ allowList: ['node-red-contrib-*'], denyList: [UPPER] }, { module: dir }), { status: 403, code: 'install_not_allowed', version: undefined });
    assert.deepEqual(await install({ allowList: ['node-red-*'], denyList: ['node-red-contrib-*'] }, { module: dir }), { status: 403, code: 'install_not_allowed', version: undefined });
    assert.deepEqual(await install({ allowList: ['node-red-contrib-*'], denyList: ['node-red-*'] }, { module: dir }), { status: 200, code: undefined, version: '1.0.0' });
  });

  it('an @range rule is checked against the version the registry resolves, the latest when none is asked for', async () => {
    const palette = { allowList: [`${UPPER}@1.x`] };
    assert.deepEqual(await install(palette, { module: UPPER, version: '1.0.0' }), { status: 200, code: undefined, version: '1.0.0' });
    assert.deepEqual(await install(palette, { module: UPPER, version: '^1.0.0' }), { status: 200, code: undefined, version: '1.0.0' });
    assert.deepEqual(await install(palette, { module: UPPER, version: '2.0.0' }), { status: 403, code: 'install_not_allowed', version: undefined });
    assert.deepEqual(await install(palette, { module: UPPER }), { status: 403, code: 'install_not_allowed', version: undefined });
    assert.deepEqual(await install({ denyList: [`${UPPER}@<2`] }, { module: UPPER }), { status: 200, code: undefined, version: '2.0.0' });
  });

  it('a module the lists refuse that is already in the user dir is not loaded at start', async () => {
    const userDir = await tempDir('runnel-palette-load-');
    try {
      await cp(await upperAt('1.0.0'), path.join(userDir, 'node_modules', UPPER), { recursive: true });
      for (const [palette, loaded] of [[{}, true], [{ denyList: ['node-red-contrib-*'] }, false], [{ allowList: [`${UPPER}@2.x`] }, false], [{ allowList: [`${UPPER}@1.x`] }, true]] as const) {
        const server = await startServer({ externalModules: { palette } }, userDir);
        try {
          const res = await request(server.at(`nodes/${UPPER}`));
          assert.equal(res.status, loaded ? 200 : 404, JSON.stringify(palette));
        } finally {
          await server.stop();
        }
      }
    } finally {
      await removeDir(userDir);
    }
  });

  it('GET /settings gives the editor the lists the settings give, and no others', async () => {
    const server = await startServer({ externalModules: { palette: { allowList: ['node-red-contrib-*'] }, modules: { denyList: ['fs-extra'] } } });
    try {
      const { externalModules } = (await request(server.at('settings'))).body as { externalModules: { palette: Record<string, unknown>; modules: Record<string, unknown> } };
      assert.deepEqual(externalModules.palette.allowList, ['node-red-contrib-*']);
      assert.equal('denyList' in externalModules.palette, false, 'a missing denyList is ["*"] to the editor once allowList is given');
      assert.deepEqual(externalModules.modules.denyList, ['fs-extra']);
      assert.equal('allowList' in externalModules.modules, false);
    } finally {
      await server.dispose();
    }
  });
});
