/**
 * A function node's Setup → Modules entry installed from the npm registry by the deploy itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { request, startServer } from '../test/helpers/server.js';
import { installCapture } from '../test/helpers/capture.js';
import { externalModulesDir } from '../src/registry/external-modules.js';
import { TAB, captureNode, flowNode, inject } from './support.js';

test('POST /flows installs left-pad for a function node before it starts, and the node pads', { timeout: 300_000 }, async () => {
  const server = await startServer();
  const capture = installCapture(server);
  try {
    const flows = [
      { id: TAB, type: 'tab', label: 'ecosystem' },
      flowNode('fn', 'function', [['out']], {
        func: 'msg.payload = leftPad(msg.payload, 6, "0");\nreturn msg;',
        outputs: 1,
        libs: [{ var: 'leftPad', module: 'left-pad' }],
      }),
      captureNode('out', 'out'),
    ];
    const res = await request(server.at('flows'), { method: 'POST', json: flows, signal: AbortSignal.timeout(240_000) });
    assert.ok(res.status === 200 || res.status === 204, `${res.status} ${res.text}`);
    const manifest = JSON.parse(await readFile(path.join(externalModulesDir(server.userDir), 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.deepEqual(Object.keys(manifest.dependencies), ['left-pad']);
    inject(server, 'fn', { payload: '42' });
    const [msg] = await capture.waitFor('out', 1);
    assert.equal(msg.payload, '000042');
  } finally {
    await server.dispose();
  }
});
