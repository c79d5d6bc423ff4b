/**
 * Where Runnel keeps its module records in .config.runtime.json: under `runnelModules`, as Node-RED's
 * storage moves a `modules` key into .config.modules.json (its own record of function-node
 * modules). Records an earlier Runnel kept under `modules` are read, and moved at the next change;
 * a `modules` entry of Node-RED's own (no `source`) is neither read nor touched.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { request, startServer } from '../helpers/server.js';

const runtimeFile = (userDir: string) => path.join(userDir, '.config.runtime.json');
const readRuntime = async (userDir: string) => JSON.parse(await readFile(runtimeFile(userDir), 'utf8')) as Record<string, { 'node-red'?: { sets: Record<string, boolean> } } & Record<string, unknown>>;

/** Starts on `runtime`, reports whether rbe is enabled, disables inject (a change Runnel records), and returns the file after. */
async function startAndChange(runtime: Record<string, unknown>) {
  const userDir = await tempDir('runnel-module-records-');
  try {
    await writeFile(runtimeFile(userDir), JSON.stringify(runtime));
    const server = await startServer({}, userDir);
    try {
      const rbe = ((await request(server.at('nodes/node-red/rbe'))).body as { enabled: boolean }).enabled;
      assert.equal((await request(server.at('nodes/node-red/inject'), { method: 'PUT', json: { enabled: false } })).status, 200);
      return { rbe, after: await readRuntime(userDir) };
    } finally {
      await server.stop();
    }
  } finally {
    await removeDir(userDir);
  }
}

describe('module records in .config.runtime.json', { timeout: 60_000 }, () => {
  it('an earlier Runnel\'s records under `modules` are read, then moved to `runnelModules`', async () => {
    const { rbe, after } = await startAndChange({ modules: { 'node-red': { source: 'builtin', version: '5.0.7', sets: { rbe: false } } } });
    assert.equal(rbe, false, 'the set the old record disabled stays disabled');
    assert.equal('modules' in after, false, 'nothing is left for Node-RED to move');
    assert.deepEqual([after.runnelModules?.['node-red']?.sets.rbe, after.runnelModules?.['node-red']?.sets.inject], [false, false]);
  });

  it('Node-RED\'s own `modules` record is neither read nor touched', async () => {
    const nodeRed = { 'left-pad': { module: 'left-pad', version: '1.0.0' } };
    const { rbe, after } = await startAndChange({ modules: nodeRed });
    assert.equal(rbe, true);
    assert.deepEqual(after.modules, nodeRed);
    assert.equal(after.runnelModules?.['node-red']?.sets.inject, false);
  });
});
