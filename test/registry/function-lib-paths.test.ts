import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, startServer } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { deploy, type Conf } from '../helpers/deploy.js';

const at = { x: 100, y: 100 };
const cap = (id: string, z = 't1'): Conf => ({ id, type: 'test-capture', z, name: id, ...at, wires: [] });

describe('function node libs stay inside the package they name', () => {
  it('RED.import keeps a function node lib inside the package it names (no ../ out of an allowed package)', async () => {
    const server = await startServer({ externalModules: { modules: { allowList: ['safe-pkg'], allowInstall: false } } });
    const marker = '__runnelReviewEscaped';
    try {
      const pkg = path.join(server.userDir, 'node_modules', 'safe-pkg');
      await mkdir(pkg, { recursive: true });
      await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'safe-pkg', version: '1.0.0', main: 'index.js' }));
      await writeFile(path.join(pkg, 'index.js'), 'module.exports = {};');
      // A file that is no package at all, outside node_modules.
      await writeFile(path.join(server.userDir, 'evil.mjs'), `globalThis.${marker} = true; export default 'escaped';`);
      const capture = installCapture(server);
      await deploy(server, [
        { id: 't1', type: 'tab', label: 'x' },
        {
          id: 'fn', type: 'function', z: 't1', name: 'fn', ...at, outputs: 1, wires: [['out']],
          func: 'msg.payload = evil; return msg;', libs: [{ var: 'evil', module: 'safe-pkg/../../evil.mjs' }],
        },
        cap('out'),
      ]);
      server.instance.runtime.services.nodes.get('fn')!.receive({ _msgid: 'm' });
      await eventually(() => server.logs.some((l) => l.includes('Function node failed to load external modules')) || capture.of('out').length > 0);
      assert.equal((globalThis as Record<string, unknown>)[marker], undefined, 'a file outside the allowed package was imported');
      assert.deepEqual(capture.of('out'), []);
    } finally {
      delete (globalThis as Record<string, unknown>)[marker];
      await server.dispose();
    }
  });
});
