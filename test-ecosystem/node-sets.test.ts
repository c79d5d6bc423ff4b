/**
 * Node sets disabled on Node-RED 4.1.15 stay disabled on Runnel, and sets disabled on Runnel show
 * disabled when Node-RED starts again on the same user dir: both read and write its
 * `.config.nodes.json`.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePeer } from '../bench/peer.js';
import { removeDir, tempDir } from '../test/helpers/dirs.js';
import { request, startServer } from '../test/helpers/server.js';
import { PEER_DIR, RED_JS, startNodeRed, stopNodeReds } from './node-red-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const UPPER = 'node-red-contrib-upper';

/** `node-red -u DIR`, Node-RED 4.1.15's; resolves once its admin API answers. */
function startPeer(userDir: string) {
  return startNodeRed(RED_JS, ['-u', userDir], userDir, 'nodes');
}

async function enabledOn(base: string, set: string): Promise<boolean> {
  const res = await fetch(`${base}nodes/${set}`, { headers: { accept: 'application/json' } });
  assert.equal(res.status, 200, `${set} on ${base}`);
  return ((await res.json()) as { enabled: boolean }).enabled;
}

async function setEnabled(base: string, set: string, enabled: boolean): Promise<void> {
  const res = await fetch(`${base}nodes/${set}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ enabled }) });
  assert.equal(res.status, 200, await res.text());
}

describe('disabled node sets between Node-RED 4.1.15 and Runnel', { timeout: 300_000 }, () => {
  after(stopNodeReds);

  it('a set disabled on either stays disabled on the other, the way there and back', async () => {
    await ensurePeer(PEER_DIR, (line) => process.stderr.write(`${line}\n`));
    const userDir = await tempDir('runnel-eco-node-sets-');
    try {
      await cp(path.join(root, 'test', 'fixtures', 'modules', UPPER), path.join(userDir, 'node_modules', UPPER), { recursive: true });
      await writeFile(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', version: '0.0.1', private: true, dependencies: { [UPPER]: '~1.0.0' } }));

      const first = await startPeer(userDir);
      await setEnabled(first.base, `${UPPER}/upper`, false);
      await setEnabled(first.base, 'node-red/rbe', false);
      await first.stop();

      const runnel = await startServer({}, userDir);
      try {
        const on = async (set: string) => ((await request(runnel.at(`nodes/${set}`))).body as { enabled: boolean }).enabled;
        assert.deepEqual([await on(`${UPPER}/upper`), await on('node-red/rbe'), await on('node-red/inject')], [false, false, true]);
        await setEnabled(runnel.url, 'node-red/exec', false);
        await setEnabled(runnel.url, 'node-red/rbe', true);
      } finally {
        await runnel.stop();
      }

      const again = await startPeer(userDir);
      try {
        assert.deepEqual(
          [await enabledOn(again.base, `${UPPER}/upper`), await enabledOn(again.base, 'node-red/exec'), await enabledOn(again.base, 'node-red/rbe'), await enabledOn(again.base, 'node-red/inject')],
          [false, false, true, true],
        );
      } finally {
        await again.stop();
      }
    } finally {
      await removeDir(userDir);
    }
  });
});
