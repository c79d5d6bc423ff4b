/**
 * Listening before the flows start: while the stored flows wait for a module npm is installing
 * (the loopback registry holds its answer), the admin API and /health answer, /health/ready says
 * not ready, and an http-in request for a route of those flows waits and is served once they run.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, request, startServer, type TestServer } from '../helpers/server.js';
import { loopbackRegistry, packPad, PAD_PACKAGE, type LoopbackRegistry } from '../helpers/registry.js';
import { removeDir, tempDir } from '../helpers/dirs.js';

describe('listening before the flows start', { timeout: 240_000 }, () => {
  let work: string;
  let registry: LoopbackRegistry;
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const saved = { registry: process.env.npm_config_registry, cache: process.env.npm_config_cache };

  before(async () => {
    work = await tempDir();
    registry = await loopbackRegistry(await readFile(await packPad(work)), () => held);
    // Every npm this process spawns (runNpm passes the environment on) asks the loopback registry.
    process.env.npm_config_registry = registry.url;
    process.env.npm_config_cache = path.join(work, 'npm-cache');
  });

  after(async () => {
    release();
    for (const key of ['registry', 'cache'] as const) {
      if (saved[key] === undefined) delete process.env[`npm_config_${key}`];
      else process.env[`npm_config_${key}`] = saved[key];
    }
    await new Promise((resolve) => registry.server.close(resolve));
    await removeDir(work);
  });

  it('answers the admin API and /health, is not ready, and holds http-in requests until the flows start', async () => {
    const userDir = await tempDir();
    const z = { z: 't1', x: 100, y: 100 };
    await writeFile(path.join(userDir, 'flows.json'), JSON.stringify([
      { id: 't1', type: 'tab', label: 'start-up' },
      { id: 'in', type: 'http in', url: '/padded', method: 'get', wires: [['pad']], ...z },
      { id: 'pad', type: 'function', func: 'msg.payload = pad("x", 3, "*"); return msg;', outputs: 1, libs: [{ var: 'pad', module: PAD_PACKAGE }], wires: [['out']], ...z },
      { id: 'out', type: 'http response', wires: [], ...z },
    ]));
    let listening: (url: string) => void = () => {};
    const heard = new Promise<string>((resolve) => (listening = resolve));
    const starting = startServer({ httpNodeRouteWait: 200_000 }, userDir, { onListening: listening });
    let server: TestServer | undefined;
    try {
      const base = await heard;
      const at = (p: string) => new URL(p, base).href;
      // npm has asked for the package: the flows cannot have started.
      await eventually(() => registry.requests.includes(`/${PAD_PACKAGE}`), 120_000);
      const padded = request(at('padded'), { signal: AbortSignal.timeout(200_000) });
      assert.deepEqual((await request(at('health'))).body, { status: 'ok' });
      const notReady = await request(at('health/ready'));
      assert.equal(notReady.status, 503);
      assert.equal((await request(at('auth/login'))).status, 200);
      const flows = await request(at('flows'));
      assert.equal(flows.status, 200);
      assert.deepEqual((flows.body as { id: string }[]).map((n) => n.id), ['t1', 'in', 'pad', 'out']);
      assert.equal((await request(at('flows/state'))).body.state, 'stop');

      release();
      server = await starting;
      const answered = await padded;
      assert.equal(answered.status, 200);
      assert.equal(answered.text, '**x');
      assert.equal((await request(server.at('health/ready'))).status, 200);
    } finally {
      release();
      await (server ?? (await starting)).dispose();
      await removeDir(userDir);
    }
  });
});
