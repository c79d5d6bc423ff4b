import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { request, startServer, type TestServer } from '../helpers/server.js';
import { NODE_RED_PACKAGE, rawTarball, type RawEntry } from '../registry/support.js';
import { tempDir, removeDir } from '../helpers/dirs.js';

/**
 * Module attacks through the real POST /nodes: hostile tarballs and crafted package
 * names are refused with a 4xx, npm never runs, and neither the user dir nor the temp dir keeps
 * anything afterwards.
 */
let server: TestServer;
let tmp: string;
let before_: string[];
before(async () => {
  server = await startServer({ externalModules: { palette: { allowInstall: true, allowUpload: true, allowLocalPaths: false, maxUploadSize: '256kb' } } });
  // A private temp dir from here on, so leftovers from uploads are ours to count.
  tmp = await tempDir('runnel-tmp-');
  process.env.TMPDIR = tmp;
  before_ = await listing(server.userDir);
});
after(async () => {
  await server.dispose();
  await removeDir(tmp);
});

async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((f) => !f.startsWith('.sessions')).sort();
}

function upload(file: Buffer, field = 'tarball') {
  const boundary = `----runnel${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="module.tgz"\r\nContent-Type: application/gzip\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return request(server.at('nodes'), { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
}

const withManifest = (...extra: RawEntry[]) => rawTarball([{ path: 'package/package.json', body: NODE_RED_PACKAGE }, ...extra]);

async function assertNothingLeft() {
  assert.deepEqual(await listing(server.userDir), before_, 'the user dir changed');
  assert.deepEqual(await readdir(tmp), [], 'uploads left temp files behind');
}

const hostile: [string, Buffer, number, string][] = [
  ['path traversal', withManifest({ path: 'package/../../escape.js', body: 'x' }), 400, 'tarball_path_traversal'],
  ['an absolute path', withManifest({ path: '/tmp/runnel-absolute.js', body: 'x' }), 400, 'tarball_absolute_path'],
  ['a symlink out', withManifest({ path: 'package/link', type: 'SymbolicLink', linkpath: '../../../etc/passwd' }), 400, 'tarball_link_outside'],
  ['an absolute symlink', withManifest({ path: 'package/link', type: 'SymbolicLink', linkpath: '/etc/shadow' }), 400, 'tarball_link_outside'],
  ['a hard link out', withManifest({ path: 'package/hard', type: 'Link', linkpath: '../etc/passwd' }), 400, 'tarball_link_outside'],
  ['a device file', withManifest({ path: 'package/dev', type: 'CharacterDevice' }), 400, 'tarball_device_entry'],
  ['a FIFO', withManifest({ path: 'package/fifo', type: 'FIFO' }), 400, 'tarball_device_entry'],
  ['a gzip bomb', withManifest({ path: 'package/zeros.js', body: '\0'.repeat(40 * 1024 * 1024) }), 400, 'tarball_too_large'],
  ['an oversize upload', randomBytes(300 * 1024), 413, 'payload_too_large'],
  ['not a tarball', Buffer.from('#!/bin/sh\nrm -rf /\n'), 400, 'tarball_not_gzip'],
];

for (const [what, file, status, code] of hostile) {
  test(`a tarball with ${what} is refused with ${status} ${code}, leaving nothing behind`, { timeout: 30_000 }, async () => {
    const res = await upload(file);
    assert.equal(res.status, status, res.text);
    assert.equal(res.body.code, code);
    await assertNothingLeft();
  });
}

test('the gzip bomb is small on the wire', () => {
  const bomb = hostile.find(([w]) => w === 'a gzip bomb')![1];
  assert.ok(bomb.length < 256 * 1024, `bomb is ${bomb.length} bytes`);
});

const craftedNames = [
  '../../etc/passwd', '..', '.', '-g', '--global', '--prefix=/tmp', '-rf', '@-scope/x', '@scope/-x', '@scope/../../x', '@/x', 'node_modules',
  'file:../x', 'git+https://example.com/x.git', 'https://example.com/x.tgz', 'x.tgz', 'x@1.0.0', 'x y', 'x\ny', 'x;rm -rf /',
  '$(touch /tmp/pwned)', '`id`', '.hidden', '_private', 'UPPER', 'a'.repeat(215), 'C:\\windows\\system32', 'x/../../y',
];

test('package names crafted as paths, flags or specifiers are refused before npm runs', async () => {
  for (const module of craftedNames) {
    const res = await request(server.at('nodes'), { method: 'POST', json: { module } });
    assert.ok(res.status === 400, `${JSON.stringify(module)} → ${res.status} ${res.text}`);
    assert.ok(['invalid_module_name', 'invalid_request'].includes(res.body.code), `${JSON.stringify(module)} → ${res.text}`);
  }
  const local = await request(server.at('nodes'), { method: 'POST', json: { module: '/etc' } });
  assert.deepEqual([local.status, local.body.code], [403, 'local_path_not_allowed']);
  const badVersion = await request(server.at('nodes'), { method: 'POST', json: { module: 'node-red-contrib-x', version: '--foo' } });
  assert.deepEqual([badVersion.status, badVersion.body.code], [400, 'invalid_request']);
  await assertNothingLeft();
});

test('names crafted as paths cannot reach removal or enabling either', async () => {
  for (const p of ['nodes/..%2F..%2Fetc', 'nodes/%2E%2E', 'nodes/-rf', 'nodes/@scope/..%2F..']) {
    const del = await request(server.at(p), { method: 'DELETE' });
    assert.equal(del.status, 404, `${p} → ${del.text}`);
    const put = await request(server.at(p), { method: 'PUT', json: { enabled: false } });
    assert.equal(put.status, 404, `${p} → ${put.text}`);
  }
  await assertNothingLeft();
});
