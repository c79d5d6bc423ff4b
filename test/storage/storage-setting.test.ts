import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { resolveSettings, SettingsError } from '../../src/settings/settings.js';
import { runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/server.js';
import { removeDir } from '../helpers/dirs.js';

describe('the storage setting', () => {
  it('defaults to the file backend', () => {
    assert.deepEqual(resolveSettings({}).storage, { type: 'file' });
    assert.deepEqual(resolveSettings({ storage: { type: 'file' } }).storage, { type: 'file' });
  });

  it('refuses an unknown backend or a malformed value with a one-line reason', () => {
    assert.throws(() => resolveSettings({ storage: { type: 's3' } }), (e: unknown) =>
      e instanceof SettingsError && /^storage\.type "s3" is not supported/.test(e.message));
    assert.throws(() => resolveSettings({ storage: 'file' }), (e: unknown) =>
      e instanceof SettingsError && /^storage must be an object/.test(e.message));
  });

  it('is not passed on to nodes as an unknown key', () => {
    assert.deepEqual(resolveSettings({ storage: { type: 'file' } }).extra, {});
  });

  it('stops the CLI with one line and exit 1 when it is invalid', async () => {
    const dir = await tempDir();
    try {
      const file = path.join(dir, 'settings.json');
      await writeFile(file, JSON.stringify({ uiPort: 0, userDir: path.join(dir, 'u'), storage: { type: 'mongo' } }));
      const r = await runCli(['start', '--settings', file]);
      assert.equal(r.code, 1);
      assert.equal(r.stderr.trim(), 'runnel: invalid settings: storage.type "mongo" is not supported (use "file" or "postgres")');
    } finally {
      await removeDir(dir);
    }
  });
});
