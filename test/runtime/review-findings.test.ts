/**
 * Bugs found reviewing the env / group / subflow-module / external-module / upload changes. Each
 * test states the behaviour that should hold; they fail until the fixes described in the review
 * report land.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, request, startServer, tempDir } from '../helpers/server.js';
import { installCapture } from '../helpers/capture.js';
import { killRunnels, spawnRunnel } from '../helpers/process.js';
import { createRedApi } from '../../src/runtime/red-api.js';
import { deploy, type Conf } from '../nodes/flow.js';

const at = { x: 100, y: 100 };
const cap = (id: string, z = 't1'): Conf => ({ id, type: 'test-capture', z, name: id, ...at, wires: [] });

describe('review findings', () => {
  it('a node in groups that name each other as parent can raise an error without hanging the runtime', async () => {
    const dir = await tempDir('runnel-review-');
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
      const res = await request(new URL('flows', proc.url).href, { method: 'POST', json: flows, signal: AbortSignal.timeout(5000) });
      assert.equal(res.status, 204, res.text);
      // The inject fires 100 ms after the deploy; a runtime stuck in a loop answers nothing after it.
      await new Promise((r) => setTimeout(r, 500));
      const alive = await request(new URL('flows', proc.url).href, { signal: AbortSignal.timeout(3000) }).catch((e: unknown) => e);
      assert.ok(!(alive instanceof Error), `runtime stopped answering: ${String(alive)}`);
      assert.equal((alive as { status: number }).status, 200);
    } finally {
      killRunnels();
      await rm(dir, { recursive: true, force: true });
    }
  });

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
});
