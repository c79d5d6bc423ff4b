import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { resolveSettings, SettingsError } from '../../../src/settings/settings.js';
import type { NodeRedStorageModule } from '../../../src/settings/storage-module.js';
import { createModuleStorage } from '../../../src/storage/node-red-module/module-storage.js';
import { storageContract } from '../contract.js';
import { historyContract } from '../history-contract.js';
import { deploy } from '../../helpers/deploy.js';
import { removeDir, tempDir } from '../../helpers/dirs.js';
import { captureLog } from '../../helpers/log.js';
import { killRunnels, ROOT, spawnRunnelWith } from '../../helpers/process.js';
import { request, eventually } from '../../helpers/server.js';

/** A storage module written against Node-RED's API only: each document a JSON file in its own directory. */
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'storage-module', 'index.js');
const fixture = createRequire(import.meta.url)(FIXTURE) as NodeRedStorageModule & { createStore(): NodeRedStorageModule };

let root: string | undefined;
let places = 0;
const newPlace = async () => path.join((root ??= await tempDir()), `u${places++}`);
const create = (userDir: string, historyMax = 50) =>
  createModuleStorage({ module: fixture.createStore(), userDir, moduleSettings: { userDir }, historyMax }, captureLog().log);

storageContract({
  name: 'Node-RED storage module',
  newPlace,
  create: (dir) => create(dir),
  dispose: async () => {
    if (root) await removeDir(root);
  },
});
historyContract({ name: 'Node-RED storage module', newPlace, create });

describe('storageModule setting', () => {
  it('takes a module with Node-RED\'s storage API, and "localfilesystem" as the file backend', () => {
    assert.equal(resolveSettings({ storageModule: fixture }).storageModule, fixture);
    assert.equal(resolveSettings({ storageModule: 'localfilesystem' }).storageModule, undefined);
  });

  it('refuses a module without the storage API, a name it cannot require, and a cluster with a module', () => {
    assert.throws(() => resolveSettings({ storageModule: { init() {} } }), (e: unknown) =>
      e instanceof SettingsError && /^storageModule lacks getFlows, saveFlows, getCredentials, saveCredentials/.test(e.message));
    assert.throws(() => resolveSettings({ storageModule: 'mongodb' }), /storageModule "mongodb" is not a built-in storage.*require\("mongodb"\)/);
    assert.throws(
      () => resolveSettings({ storageModule: fixture, storage: { type: 'postgres', url: 'postgresql://u:p@127.0.0.1/db' } }),
      /storageModule cannot be combined with storage.type "postgres"/,
    );
  });
});

describe('storageModule in a running Runnel', { timeout: 90_000 }, () => {
  after(killRunnels);

  it('loads the flows from the module, saves a deploy through saveFlows and keeps history beside it', async () => {
    const dir = await tempDir();
    try {
      const store = path.join(dir, 'store');
      await mkdir(store);
      const flows = [{ id: 't1', type: 'tab', label: 'From the module' }, { id: 'c1', type: 'comment', z: 't1', name: 'stored', wires: [] }];
      await writeFile(path.join(store, 'flows.json'), JSON.stringify(flows));
      const settingsFile = path.join(dir, 'settings.js');
      await writeFile(settingsFile, `module.exports = {
  uiPort: 0, uiHost: '127.0.0.1', userDir: ${JSON.stringify(path.join(dir, 'user'))}, credentialSecret: 'a secret',
  logging: { console: { level: 'warn' } },
  jsonStoreDir: ${JSON.stringify(store)},
  storageModule: require(${JSON.stringify(FIXTURE)}),
};\n`);
      const runnel = await spawnRunnelWith(['start', '--settings', settingsFile], dir);
      const loaded = await request(new URL('flows', runnel.url).href);
      assert.deepEqual(loaded.body, flows);
      assert.doesNotMatch(runnel.output(), /Settings Runnel does not support/);

      const next = [{ id: 't1', type: 'tab', label: 'Deployed' }];
      await deploy(runnel, next);
      assert.deepEqual(JSON.parse(await readFile(path.join(store, 'flows.json'), 'utf8')), next);
      assert.match(await readFile(path.join(store, 'calls.log'), 'utf8'), /^init\n(.*\n)*saveflows\n/);
      const history = await eventually(async () => {
        const r = await request(new URL('flows/history', runnel.url).href);
        assert.equal(r.body.revisions.length, 2);
        return r.body.revisions as Array<{ action: string }>;
      });
      assert.deepEqual(history.map((r) => r.action), ['deploy', 'external']);
      // The user dir has the history and no flows file: the module keeps the flows.
      await assert.rejects(readFile(path.join(dir, 'user', 'flows.json')), { code: 'ENOENT' });
      await readFile(path.join(dir, 'user', '.history', 'index.json'));
    } finally {
      killRunnels();
      await removeDir(dir);
    }
  });
});
