import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { createRedApi } from '../../src/runtime/red-api/red-api.js';
import { deploy, type Conf } from '../helpers/deploy.js';

const at = { x: 100, y: 100 };
const cap = (id: string, z = 't1'): Conf => ({ id, type: 'test-capture', z, name: id, ...at, wires: [] });

describe('subflow modules with malformed flow entries', () => {
  it('a subflow module with odd flow entries (null, no type) is refused or fails alone, never the whole deploy', async () => {
    const server = await startServer();
    try {
      const capture = installCapture(server);
      const runtime = server.instance.runtime;
      runtime.registry.addModule({ name: 'review-sf-module', version: '1.0.0', builtin: false });
      const RED = createRedApi(runtime, runtime.registry.addSet('review-sf-module', 'sf'));
      // Refusing the definition at registration is as good as failing only its instances.
      try {
        RED.nodes.registerSubflow({
          id: 'mod', type: 'subflow', name: 'odd', meta: { type: 'review-odd' },
          in: [{ ...at, wires: [{ id: 'inner' }] }], out: [{ ...at, wires: [{ id: 'inner', port: 0 }] }],
          flow: [null, { id: 'typeless', z: 'mod', ...at, wires: [] }, { id: 'inner', type: 'function', z: 'mod', ...at, func: 'return msg;', outputs: 1, wires: [[]] }],
        });
      } catch (err) {
        assert.ok(err instanceof Error);
      }
      await deploy(server, [
        { id: 't1', type: 'tab', label: 'plain' },
        { id: 't2', type: 'tab', label: 'module' },
        { id: 'inst', type: 'review-odd', z: 't2', ...at, wires: [[]] },
        { id: 'pass', type: 'function', z: 't1', ...at, func: 'return msg;', outputs: 1, wires: [['out']] },
        cap('out'),
      ]);
      runtime.services.nodes.get('pass')!.receive({ _msgid: 'p' });
      await capture.waitFor('out', 1, 2000);
    } finally {
      await server.dispose();
    }
  });
});
