/**
 * Uploads a tarball made by `npm pack` of a registry package (needs the npm registry).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer } from '../test/helpers/server.js';
import { installCapture } from '../test/helpers/capture.js';
import { findNpm } from '../src/registry/npm.js';
import { tempDir, removeDir } from '../test/helpers/dirs.js';
import { deploy } from '../test/helpers/deploy.js';

const run = promisify(execFile);

test('a tarball packed from the registry installs through multipart POST /nodes and its node runs', { timeout: 300_000 }, async () => {
  const work = await tempDir();
  const server = await startServer();
  const capture = installCapture(server);
  try {
    const npm = findNpm()!;
    const { stdout } = await run(npm.file, [...npm.args, 'pack', 'node-red-node-smooth@0.1.2', '--silent'], { cwd: work });
    const file = path.join(work, stdout.trim().split('\n').pop()!);
    const form = new FormData();
    form.append('tarball', new Blob([await readFile(file)], { type: 'application/x-compressed-tar' }), path.basename(file));
    const res = await fetch(server.at('nodes'), { method: 'POST', body: form });
    const body = (await res.json()) as { name: string; version: string; nodes: { types: string[]; loaded: boolean }[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.name, 'node-red-node-smooth');
    assert.equal(body.version, '0.1.2');
    assert.deepEqual(body.nodes[0].types, ['smooth']);
    assert.equal(body.nodes[0].loaded, true);

    const flows = [
      { id: 't1', type: 'tab' },
      { id: 's', type: 'smooth', z: 't1', action: 'mean', count: '3', round: '', mult: 'single', x: 1, y: 1, wires: [['out']] },
      { id: 'out', type: 'test-capture', name: 'out', z: 't1', x: 1, y: 1, wires: [] },
    ];
    await deploy(server, flows);
    const node = server.instance.runtime.services.nodes.get('s')!;
    for (const payload of [3, 6, 9]) node.receive({ payload });
    const got = await capture.waitFor('out', 3);
    assert.deepEqual(got.map((m) => m.payload), [3, 4.5, 6]);
  } finally {
    await server.dispose();
    await removeDir(work);
  }
});
