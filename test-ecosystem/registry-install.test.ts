/**
 * Installs from the public npm registry (needs network; run with `npm run test:ecosystem`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { request, startServer, type TestServer } from '../test/helpers/server.js';

describe('registry installs', { timeout: 300_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.dispose());
  const post = (json: unknown) => request(server.at('nodes'), { method: 'POST', json, signal: AbortSignal.timeout(240_000) });

  it('installs node-red-node-random at a given version and records it with a ~ range', async () => {
    const res = await post({ module: 'node-red-node-random', version: '0.4.1' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'node-red-node-random');
    assert.equal(res.body.version, '0.4.1');
    assert.deepEqual(res.body.nodes[0].types, ['random']);
    assert.equal(res.body.nodes[0].loaded, true);
    const manifest = JSON.parse(await readFile(path.join(server.userDir, 'package.json'), 'utf8'));
    assert.equal(manifest.dependencies['node-red-node-random'], '~0.4.1');
  });

  it('answers module_already_loaded for the same version', async () => {
    const res = await post({ module: 'node-red-node-random', version: '0.4.1' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'module_already_loaded');
  });

  it('answers 404 for a package the registry does not have (E404)', async () => {
    const res = await post({ module: 'runnel-no-such-package-4f1c9a' });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'not_found');
    assert.match(res.body.message, /404/);
  });

  it('answers 404 for a version the registry does not have (ETARGET), keeping the installed one', async () => {
    const res = await post({ module: 'node-red-node-random', version: '99.0.0' });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'not_found');
    const mod = await request(server.at('nodes/node-red-node-random'));
    assert.equal(mod.body.version, '0.4.1');
    assert.equal(server.instance.runtime.registry.isKnownType('random'), true);
  });
});
