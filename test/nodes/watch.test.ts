import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, request, eventually, tempDir, type TestServer } from '../helpers/server.js';
import { installCapture, type Capture } from '../helpers/capture.js';
import { node } from './flow.js';

describe('watch and unknown nodes', () => {
  let server: TestServer;
  let capture: Capture;
  let dir: string;
  const single = () => path.join(dir, 'one.txt');

  before(async () => {
    dir = await tempDir('runnel-watch-');
    await mkdir(path.join(dir, 'sub'));
    await writeFile(single(), 'start');
    server = await startServer();
    capture = installCapture(server);
    const r = await request(server.at('flows'), {
      method: 'POST',
      json: [
        { id: 't1', type: 'tab', label: 'watch' },
        node('wdir', 'watch', { files: dir, recursive: true }, [['dir-got']]), node('dir-got', 'test-capture'),
        node('wfile', 'watch', { files: single(), recursive: false }, [['file-got']]), node('file-got', 'test-capture'),
        node('wmissing', 'watch', { files: path.join(dir, 'absent'), recursive: false }, [[]]),
        node('catch', 'catch', { scope: ['wmissing'], uncaught: false }, [['errors']]), node('errors', 'test-capture'),
        node('u', 'unknown', {}, [[]]),
      ],
    });
    assert.equal(r.status, 204, r.text);
  });
  after(async () => {
    await server.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  test('file changes in a watched directory (and its sub-directories) and a watched file are reported', async () => {
    const created = path.join(dir, 'sub', 'new.txt');
    await writeFile(created, 'hello');
    const seen = await eventually(() => capture.of('dir-got').find((m) => m.filename === created));
    assert.deepEqual({ ...seen, _msgid: undefined }, { _msgid: undefined, payload: created, topic: dir, file: 'new.txt', filename: created, event: 'update', size: 5, type: 'file' });
    await unlink(created);
    const removed = await eventually(() => capture.of('dir-got').find((m) => m.filename === created && m.event === 'remove'));
    assert.equal(removed?.type, 'none');
    await writeFile(single(), 'changed!');
    const [f] = await capture.waitFor('file-got');
    assert.equal(f.filename, single());
    assert.equal(f.size, 8);
  });

  test('a path that does not exist is an error; an unknown node deploys and runs', async () => {
    const [e] = await capture.waitFor('errors');
    assert.match(e.error.message, /ENOENT/);
    const state = await request(server.at('flows/state'));
    assert.equal(state.body.state, 'start');
    assert.equal(state.body.missingTypes, undefined);
  });
});
