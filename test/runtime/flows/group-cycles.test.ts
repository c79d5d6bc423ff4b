import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../../helpers/server.js';
import { killRunnels, spawnRunnel } from '../../helpers/process.js';
import { tempDir, removeDir } from '../../helpers/dirs.js';
import { deploy, type Conf } from '../../helpers/deploy.js';

const at = { x: 100, y: 100 };

// A separate process: if the runtime loops, only it stops answering, not the test runner.
describe('groups that name each other as parent', () => {
  it('a node in groups that name each other as parent can raise an error without hanging the runtime', async () => {
    const dir = await tempDir('runnel-groups-');
    try {
      const proc = await spawnRunnel(dir, {});
      const flows: Conf[] = [
        { id: 't1', type: 'tab', label: 'cycle' },
        { id: 'ga', type: 'group', z: 't1', g: 'gb', nodes: ['boom'] },
        { id: 'gb', type: 'group', z: 't1', g: 'ga', nodes: [] },
        { id: 'inj', type: 'inject', z: 't1', ...at, once: true, onceDelay: 0.1, repeat: '', props: [{ p: 'payload' }], payload: '', payloadType: 'date', wires: [['boom']] },
        { id: 'boom', type: 'function', z: 't1', g: 'ga', ...at, func: 'throw new Error("boom");', outputs: 1, wires: [[]] },
        { id: 'catcher', type: 'catch', z: 't1', ...at, wires: [[]] },
      ];
      await deploy(proc, flows);
      // The inject fires 100 ms after the deploy; a runtime stuck in a loop answers nothing after it.
      await new Promise((r) => setTimeout(r, 500));
      const alive = await request(new URL('flows', proc.url).href, { signal: AbortSignal.timeout(3000) }).catch((e: unknown) => e);
      assert.ok(!(alive instanceof Error), `runtime stopped answering: ${String(alive)}`);
      assert.equal((alive as { status: number }).status, 200);
    } finally {
      killRunnels();
      await removeDir(dir);
    }
  });
});
