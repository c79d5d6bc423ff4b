import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request, eventually } from '../helpers/server.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { flowSuite, node } from './flow.js';

describe('watch and unknown nodes', () => {
  let dir: string;
  const single = () => path.join(dir, 'one.txt');

  before(async () => {
    dir = await tempDir('runnel-watch-');
    await mkdir(path.join(dir, 'sub'));
    await writeFile(single(), 'start');
  });
  const t = flowSuite(() => [
    { id: 't1', type: 'tab', label: 'watch' },
    node('wdir', 'watch', { files: dir, recursive: true }, [['dir-got']]), node('dir-got', 'test-capture'),
    node('wfile', 'watch', { files: single(), recursive: false }, [['file-got']]), node('file-got', 'test-capture'),
    node('wmissing', 'watch', { files: path.join(dir, 'absent'), recursive: false }, [[]]),
    node('catch', 'catch', { scope: ['wmissing'], uncaught: false }, [['errors']]), node('errors', 'test-capture'),
    node('u', 'unknown', {}, [[]]),
  ]);
  after(() => removeDir(dir));

  test('file changes in a watched directory (and its sub-directories) and a watched file are reported', async () => {
    const created = path.join(dir, 'sub', 'new.txt');
    await writeFile(created, 'hello');
    const seen = await eventually(() => t.capture.of('dir-got').find((m) => m.filename === created));
    assert.deepEqual({ ...seen, _msgid: undefined }, { _msgid: undefined, payload: created, topic: dir, file: 'new.txt', filename: created, event: 'update', size: 5, type: 'file' });
    await unlink(created);
    const removed = await eventually(() => t.capture.of('dir-got').find((m) => m.filename === created && m.event === 'remove'));
    assert.equal(removed?.type, 'none');
    await writeFile(single(), 'changed!');
    const [f] = await t.capture.waitFor('file-got');
    assert.equal(f.filename, single());
    assert.equal(f.size, 8);
  });

  test('a path that does not exist is an error; an unknown node deploys and runs', async () => {
    const [e] = await t.capture.waitFor('errors');
    assert.match(e.error.message, /ENOENT/);
    const state = await request(t.server.at('flows/state'));
    assert.equal(state.body.state, 'start');
    assert.equal(state.body.missingTypes, undefined);
  });
});
