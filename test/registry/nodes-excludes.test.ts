/**
 * Node-RED's `nodesExcludes` and `nodesIncludes`: the node files and module directories the first
 * names are not loaded, and with the second set only those it names are — a core node by Node-RED's
 * file name (`90-exec.js`), a module in the user dir's node_modules or a nodesDir by its directory's
 * name (within its scope) — and neither setting is named as unsupported at start.
 */
import assert from 'node:assert/strict';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { resolveSettings } from '../../src/settings/settings.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { request, startServer } from '../helpers/server.js';
import { FIXTURES } from './support.js';

describe('nodesExcludes and nodesIncludes', { timeout: 60_000 }, () => {
  it('leaves out the core files, node_modules entries and nodesDir modules it names, and only those', async () => {
    const userDir = await tempDir('runnel-excludes-');
    const nodesDir = await tempDir('runnel-excludes-dir-');
    try {
      await cp(path.join(FIXTURES, 'node-red-contrib-upper'), path.join(userDir, 'node_modules', 'node-red-contrib-upper'), { recursive: true });
      const scoped = path.join(userDir, 'node_modules', '@runnel-test', 'shout');
      await cp(path.join(FIXTURES, 'node-red-contrib-shout'), scoped, { recursive: true });
      const pkg = JSON.parse(await readFile(path.join(scoped, 'package.json'), 'utf8')) as Record<string, unknown>;
      await writeFile(path.join(scoped, 'package.json'), JSON.stringify({ ...pkg, name: '@runnel-test/shout' }));
      await cp(path.join(FIXTURES, 'node-red-contrib-shout'), path.join(nodesDir, 'node-red-contrib-shout'), { recursive: true });

      const loaded = async (nodesExcludes: string[] | undefined, nodesIncludes?: string[]) => {
        const server = await startServer({ nodesDir: [nodesDir], ...(nodesExcludes ? { nodesExcludes } : {}), ...(nodesIncludes ? { nodesIncludes } : {}) }, userDir);
        try {
          const sets = (await request(server.at('nodes'))).body as { id: string }[];
          const warned = server.logs.some((line) => line.includes('does not support') && /nodesExcludes|nodesIncludes/.test(line));
          return { ids: sets.map((s) => s.id), warned };
        } finally {
          await server.stop();
        }
      };

      const all = await loaded(undefined);
      for (const id of ['node-red/exec', 'node-red/rbe', 'node-red-contrib-upper/upper', '@runnel-test/shout/shout', 'node-red-contrib-shout/shout']) assert.ok(all.ids.includes(id), id);

      const some = await loaded(['90-exec.js', 'rbe.js', 'node-red-contrib-upper', 'shout', 'exec.js']);
      assert.deepEqual(
        ['node-red/exec', 'node-red/rbe', 'node-red-contrib-upper/upper', '@runnel-test/shout/shout'].filter((id) => some.ids.includes(id)),
        [],
        'the named files and directories are not loaded',
      );
      assert.ok(some.ids.includes('node-red-contrib-shout/shout'), 'a directory with another name still loads');
      assert.ok(some.ids.includes('node-red/inject'));
      assert.equal(some.ids.length, all.ids.length - 4);
      assert.equal(some.warned, false, 'not named as unsupported');

      assert.ok((await loaded(['node-red-contrib-shout'])).ids.every((id) => id !== 'node-red-contrib-shout/shout'), 'a nodesDir module by its directory name');

      const only = await loaded(['10-function.js'], ['20-inject.js', '10-function.js', 'node-red-contrib-upper', 'shout']);
      // node-red/queue is Runnel's own: no Node-RED file name to give it.
      assert.deepEqual(only, { ids: ['node-red/inject', 'node-red/queue', '@runnel-test/shout/shout', 'node-red-contrib-upper/upper'], warned: false }, 'nodesIncludes names all that loads, core files included; nodesExcludes still wins');
    } finally {
      await removeDir(userDir);
      await removeDir(nodesDir);
    }
  });

  it('must be lists of names', () => {
    assert.throws(() => resolveSettings({ nodesExcludes: '90-exec.js' }), { message: 'nodesExcludes must be an array of node file or module directory names' });
    assert.throws(() => resolveSettings({ nodesIncludes: [1] }), { message: 'nodesIncludes must be an array of node file or module directory names' });
  });
});
