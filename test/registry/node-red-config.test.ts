/**
 * Node-RED's `.config.nodes.json`, both ways: sets disabled on Node-RED (the fixture is the file
 * Node-RED 4.1.15 wrote after `node-red/rbe` and `node-red-contrib-upper/upper` were disabled
 * through its admin API) stay disabled on Runnel, and sets Runnel disables or enables are written
 * there in Node-RED's format, the rest of the file kept.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { copyFile, cp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { request, startServer } from '../helpers/server.js';
import { FIXTURES } from './support.js';

const NODE_RED_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/node-red/config-nodes.json');
const UPPER = 'node-red-contrib-upper';

type NodeRedModules = Record<string, { version?: string; nodes: Record<string, { enabled: boolean; module?: string; types?: string[]; file?: string }> }>;

async function userDirWithUpper(): Promise<string> {
  const userDir = await tempDir('runnel-config-nodes-');
  await cp(path.join(FIXTURES, UPPER), path.join(userDir, 'node_modules', UPPER), { recursive: true });
  return userDir;
}

const enabled = async (server: { at(p: string): string }, id: string) => ((await request(server.at(`nodes/${id}`))).body as { enabled: boolean }).enabled;
const fileOf = async (userDir: string) => JSON.parse(await readFile(path.join(userDir, '.config.nodes.json'), 'utf8')) as NodeRedModules;

describe('.config.nodes.json', { timeout: 60_000 }, () => {
  it("keeps the sets Node-RED disabled disabled, and writes Runnel's changes back in Node-RED's format", async () => {
    const userDir = await userDirWithUpper();
    try {
      await copyFile(NODE_RED_FILE, path.join(userDir, '.config.nodes.json'));
      const server = await startServer({}, userDir);
      try {
        assert.equal(await enabled(server, `${UPPER}/upper`), false);
        assert.equal(await enabled(server, 'node-red/rbe'), false);
        assert.equal(await enabled(server, 'node-red/inject'), true);

        const on = await request(server.at(`nodes/${UPPER}/upper`), { method: 'PUT', json: { enabled: true } });
        assert.equal(on.status, 200, on.text);
        const off = await request(server.at('nodes/node-red/exec'), { method: 'PUT', json: { enabled: false } });
        assert.equal(off.status, 200, off.text);
      } finally {
        await server.stop();
      }
      const written = await fileOf(userDir);
      const before = JSON.parse(await readFile(NODE_RED_FILE, 'utf8')) as NodeRedModules;
      assert.equal(written[UPPER].nodes.upper.enabled, true);
      assert.equal(written['node-red'].nodes.exec.enabled, false);
      assert.equal(written['node-red'].nodes.rbe.enabled, false, 'a flag Runnel did not change stays');
      assert.equal(written['node-red'].version, '4.1.15', "Node-RED's own fields are kept");
      assert.equal(written[UPPER].nodes.upper.file, before[UPPER].nodes.upper.file);
      assert.equal(existsSync(path.join(userDir, '.config.nodes.json.backup')), true, 'the previous file is kept as Node-RED keeps it');

      const again = await startServer({}, userDir);
      try {
        assert.equal(await enabled(again, 'node-red/exec'), false);
        assert.equal(await enabled(again, `${UPPER}/upper`), true);
      } finally {
        await again.stop();
      }
    } finally {
      await removeDir(userDir);
    }
  });

  it('a start that changes no flag leaves the file and its backup alone', async () => {
    const userDir = await userDirWithUpper();
    const file = path.join(userDir, '.config.nodes.json');
    try {
      await copyFile(NODE_RED_FILE, file);
      // The first start may add the sets Runnel has and the file lacks; the next has nothing to add.
      await (await startServer({}, userDir)).stop();
      const text = await readFile(file, 'utf8');
      await rm(path.join(userDir, '.config.nodes.json.backup'), { force: true });
      const again = await startServer({}, userDir);
      try {
        assert.equal(await enabled(again, 'node-red/rbe'), false);
      } finally {
        await again.stop();
      }
      assert.equal(await readFile(file, 'utf8'), text);
      assert.equal(existsSync(path.join(userDir, '.config.nodes.json.backup')), false, 'not rewritten, so its backup was not replaced');
    } finally {
      await removeDir(userDir);
    }
  });

  it('a set disabled on a Runnel user dir without the file creates it for Node-RED; an untouched user dir gets none', async () => {
    const userDir = await userDirWithUpper();
    try {
      const server = await startServer({}, userDir);
      try {
        assert.equal(existsSync(path.join(userDir, '.config.nodes.json')), false, 'nothing to tell Node-RED yet');
        const off = await request(server.at(`nodes/${UPPER}/upper`), { method: 'PUT', json: { enabled: false } });
        assert.equal(off.status, 200, off.text);
      } finally {
        await server.stop();
      }
      const written = await fileOf(userDir);
      assert.ok(written['node-red'], "Node-RED reads the file as its current format only with the node-red entry");
      assert.deepEqual(written[UPPER].nodes.upper, { name: 'upper', types: ['upper-case'], local: true, user: false, module: UPPER, enabled: false });
      assert.equal(written['node-red'].nodes.inject.enabled, true);
    } finally {
      await removeDir(userDir);
    }
  });
});
