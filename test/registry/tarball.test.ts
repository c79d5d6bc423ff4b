import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { inspectTarball } from '../../src/registry/tarball.js';
import { NODE_RED_PACKAGE, copyFixture, npmPack, rawTarball, type RawEntry } from './support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';

describe('inspectTarball', { timeout: 60_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => removeDir(dir));

  let n = 0;
  const write = async (content: Buffer) => {
    const file = path.join(dir, `t${++n}.tgz`);
    await writeFile(file, content);
    return file;
  };
  const withManifest = (...extra: RawEntry[]) => rawTarball([{ path: 'package/package.json', body: NODE_RED_PACKAGE }, { path: 'package/evil.js', body: '' }, ...extra]);
  const rejects = async (content: Buffer, code: string) => {
    await assert.rejects(inspectTarball(await write(content)), (err: { code: string; status: number }) => {
      assert.equal(err.code, code);
      assert.equal(err.status, 400);
      return true;
    });
  };

  it('accepts an npm pack tarball and reads its package', async () => {
    const src = await copyFixture('node-red-contrib-upper', dir);
    const packDir = path.join(dir, 'packed');
    await mkdir(packDir);
    const pkg = await inspectTarball(await npmPack(src, packDir));
    assert.equal(pkg.name, 'node-red-contrib-upper');
    assert.equal(pkg.version, '1.0.0');
    assert.deepEqual(pkg.nodes, { upper: 'upper.js' });
  });

  it('accepts links that stay inside the package', async () => {
    const pkg = await inspectTarball(await write(withManifest({ path: 'package/lib/alias.js', type: 'SymbolicLink', linkpath: '../evil.js' })));
    assert.equal(pkg.name, 'node-red-contrib-evil');
  });

  it('refuses a file that is not gzip', () => rejects(Buffer.from('PK\u0003\u0004 not a tarball at all'), 'tarball_not_gzip'));
  it('refuses gzip data that is not a tar archive', () => rejects(gzipSync(Buffer.from('x'.repeat(700))), 'tarball_invalid'));
  it('refuses a package without a node-red section', () =>
    rejects(rawTarball([{ path: 'package/package.json', body: JSON.stringify({ name: 'plain', version: '1.0.0' }) }]), 'not_node_module'));
  it('refuses an archive without package/package.json', () => rejects(rawTarball([{ path: 'other/package.json', body: NODE_RED_PACKAGE }]), 'not_node_module'));
  it('refuses path traversal', () => rejects(withManifest({ path: 'package/../../escape.js', body: 'x' }), 'tarball_path_traversal'));
  it('refuses absolute paths', () => rejects(withManifest({ path: '/tmp/runnel-absolute.js', body: 'x' }), 'tarball_absolute_path'));
  it('refuses symlinks pointing outside the package', () =>
    rejects(withManifest({ path: 'package/link', type: 'SymbolicLink', linkpath: '../../../etc/passwd' }), 'tarball_link_outside'));
  it('refuses absolute symlink targets', () => rejects(withManifest({ path: 'package/link', type: 'SymbolicLink', linkpath: '/etc/passwd' }), 'tarball_link_outside'));
  it('refuses hard links outside the package', () => rejects(withManifest({ path: 'package/hard', type: 'Link', linkpath: '../etc/passwd' }), 'tarball_link_outside'));
  it('refuses device files', () => rejects(withManifest({ path: 'package/dev', type: 'CharacterDevice' }), 'tarball_device_entry'));
  it('refuses FIFOs', () => rejects(withManifest({ path: 'package/fifo', type: 'FIFO' }), 'tarball_device_entry'));
});
