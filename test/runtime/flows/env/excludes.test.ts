import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../../helpers/server.js';
import { installCapture } from '../../../helpers/capture.js';
import { deploy, type Conf } from '../../../helpers/deploy.js';

const at = { x: 100, y: 100 };
const cap = (id: string, z = 't1'): Conf => ({ id, type: 'test-capture', z, name: id, ...at, wires: [] });

describe('envVarExcludes', () => {
  it('envVarExcludes hides process env only: a global-config env entry of that name is still read (Node-RED getEnvVar)', async () => {
    process.env.RUNNEL_REVIEW_EXCLUDED = 'from-process';
    const server = await startServer({ envVarExcludes: ['RUNNEL_REVIEW_EXCLUDED'] });
    try {
      const capture = installCapture(server);
      await deploy(server, [
        { id: 'gc', type: 'global-config', env: [{ name: 'RUNNEL_REVIEW_EXCLUDED', value: 'from-global', type: 'str' }] },
        { id: 't1', type: 'tab', label: 'x' },
        { id: 'fn', type: 'function', z: 't1', ...at, outputs: 1, wires: [['out']], func: 'msg.payload = env.get("RUNNEL_REVIEW_EXCLUDED"); return msg;' },
        cap('out'),
      ]);
      server.instance.runtime.services.nodes.get('fn')!.receive({ _msgid: 'e' });
      const [msg] = await capture.waitFor('out');
      assert.equal(msg.payload, 'from-global');
    } finally {
      delete process.env.RUNNEL_REVIEW_EXCLUDED;
      await server.dispose();
    }
  });

  it("Runnel's secret variables (RUNNEL_STORAGE_URL) are hidden from env lookups even while process.env holds them (an embedded runtime)", async () => {
    const server = await startServer();
    process.env.RUNNEL_STORAGE_URL = 'postgresql://u:embedded-secret@127.0.0.1/db';
    try {
      const capture = installCapture(server);
      await deploy(server, [
        { id: 't1', type: 'tab', label: 'x' },
        { id: 'fn', type: 'function', z: 't1', ...at, outputs: 1, wires: [['out']], func: 'msg.payload = [env.get("RUNNEL_STORAGE_URL"), RED.util.getSetting(null, "RUNNEL_STORAGE_URL")]; return msg;' },
        cap('out'),
      ]);
      server.instance.runtime.services.nodes.get('fn')!.receive({ _msgid: 's' });
      const [msg] = await capture.waitFor('out');
      assert.deepEqual([...(msg.payload as unknown[])], [undefined, undefined]);
    } finally {
      delete process.env.RUNNEL_STORAGE_URL;
      await server.dispose();
    }
  });
});
