/**
 * The main suite starts Runnel with test/fixtures/node-red/settings.js as Node-RED's stock settings
 * file (test/settings/node-red.test.ts); this checks that it is that file: byte for byte the
 * settings.js of the Node-RED the differential suite installs from npm.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePeer, PEER_VERSION } from '../bench/peer.js';

/** dist/test-ecosystem → repository root. */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

it(`the stock settings.js fixture is node-red@${PEER_VERSION}'s`, { timeout: 600_000 }, async () => {
  const peerDir = path.join(root, 'bench', '.peer');
  await ensurePeer(peerDir, (line) => process.stderr.write(`${line}\n`));
  const shipped = await readFile(path.join(peerDir, 'node_modules', 'node-red', 'settings.js'));
  const fixture = await readFile(path.join(root, 'test', 'fixtures', 'node-red', 'settings.js'));
  assert.ok(fixture.equals(shipped), 'test/fixtures/node-red/settings.js differs from the settings.js npm installs');
});
