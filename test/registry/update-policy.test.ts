/**
 * Node-RED's `externalModules.palette.allowUpdate`, `allowUpdateList` and `denyUpdateList`:
 * installing a module that is already there is an update, refused with Node-RED's code.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertUpdateAllowed } from '../../src/registry/installer.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { request, startServer } from '../helpers/server.js';
import { copyFixture } from './support.js';

const palette = (p: Record<string, unknown>) => resolveSettings({ externalModules: { palette: p } }).externalModules.palette;
const allowed = (name: string, p: Record<string, unknown>) => {
  try {
    assertUpdateAllowed(name, palette(p));
    return true;
  } catch (e) {
    assert.equal((e as { code?: string }).code, 'update_not_allowed');
    return false;
  }
};

describe('update policy', () => {
  it('follows Node-RED: allowUpdate, a missing list is ["*"] once the other is given, the more specific rule wins', () => {
    assert.equal(allowed('a', {}), true);
    assert.equal(allowed('a', { allowUpdate: false }), false);
    // Node-RED's stock settings.js.
    assert.equal(allowed('a', { allowUpdate: true, allowUpdateList: ['*'], denyUpdateList: [] }), true);
    assert.equal(allowed('a', { allowUpdateList: ['b'] }), false, 'an allow list alone allows only what it lists');
    assert.equal(allowed('b', { allowUpdateList: ['b'] }), true);
    assert.equal(allowed('node-red-contrib-x', { denyUpdateList: ['node-red-contrib-*'] }), false);
    assert.equal(allowed('node-red-contrib-x', { allowUpdateList: ['node-red-contrib-x'], denyUpdateList: ['node-red-contrib-*'] }), true);
    assert.equal(allowed('node-red-contrib-y', { allowUpdateList: ['node-red-contrib-x'], denyUpdateList: ['node-red-contrib-*'] }), false);
    assert.equal(allowed('a', { allowUpdateList: ['a@1.x'], denyUpdateList: ['*'] }), true, 'a version range does not narrow an update rule');
  });
});

describe('POST /nodes with update settings', { timeout: 120_000 }, () => {
  let work: string;
  before(async () => {
    work = await tempDir('runnel-update-');
  });
  after(async () => {
    await removeDir(work);
  });

  const upper = async (version: string) => {
    const dir = await copyFixture('node-red-contrib-upper', work, `upper-${version}-${Math.random().toString(36).slice(2)}`);
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
    return dir;
  };

  for (const [what, settings] of [
    ['allowUpdate: false', { allowUpdate: false }],
    ['a denyUpdateList naming it', { allowUpdateList: ['*'], denyUpdateList: ['node-red-contrib-upper'] }],
  ] as const) {
    it(`answers 403 update_not_allowed to an upgrade refused by ${what}, installing a new module still`, async () => {
      const server = await startServer({ externalModules: { palette: settings } });
      try {
        const first = await request(server.at('nodes'), { method: 'POST', json: { module: await upper('1.0.0') } });
        assert.equal(first.status, 200, first.text);
        const upgrade = await request(server.at('nodes'), { method: 'POST', json: { module: await upper('2.0.0') } });
        assert.equal(upgrade.status, 403, upgrade.text);
        assert.equal(upgrade.body.code, 'update_not_allowed');
        const listed = await request(server.at('nodes/node-red-contrib-upper'));
        assert.equal(listed.body.version, '1.0.0');
        const editor = await request(server.at('settings'));
        assert.equal(editor.body.externalModules.palette.allowUpdate, settings.allowUpdate !== false);
      } finally {
        await server.dispose();
      }
    });
  }
});
