import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Fastify from 'fastify';
import { StaticFiles } from '../../src/server/editor/static-files.js';
import { removeDir } from '../helpers/dirs.js';
import { tempDir } from '../helpers/server.js';

/**
 * Anonymous requests for editor files that do not exist each left an entry in the file cache
 * (about 1.4 KB each: 150,000 requests took the process from 83 to 280 MB, never given back).
 */

async function serving(files: StaticFiles) {
  const app = Fastify();
  app.get('/*', async (request, reply) => {
    if (!(await files.serve(request, reply, (request.params as { '*': string })['*']))) return reply.code(404).send({ code: 'not_found' });
    return reply;
  });
  await app.ready();
  return app;
}

test('editor files that do not exist are not remembered, and the files kept are bounded in bytes', async () => {
  const dir = await tempDir();
  try {
    for (let i = 0; i < 10; i++) await writeFile(path.join(dir, `f${i}.js`), 'x'.repeat(1000));
    const files = new StaticFiles(dir, 4000);
    const app = await serving(files);
    for (let i = 0; i < 2000; i++) assert.equal((await app.inject(`/red/missing-${i}.js`)).statusCode, 404);
    assert.equal(files.size, 0, 'paths without a file were kept');
    for (let i = 0; i < 10; i++) assert.equal((await app.inject(`/f${i}.js`)).statusCode, 200);
    assert.equal(files.size, 4, 'more files were kept than their byte budget holds');
    // The most recently used stay; an evicted one is read again and served the same.
    const again = await app.inject('/f0.js');
    assert.equal(again.statusCode, 200);
    assert.equal(again.body.length, 1000);
    await app.close();
  } finally {
    await removeDir(dir);
  }
});
