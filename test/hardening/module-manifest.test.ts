import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { request, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { rawTarball } from '../registry/support.js';
import { parseNodeModulePackage } from '../../src/registry/package.js';
import { assertInstallableManifest } from '../../src/registry/installer.js';

/**
 * An uploaded tarball's `version` (`1.0.0/../../..`) was used in a
 * file path, writing (and later deleting) a file outside the user dir; a tarball depending on
 * `file:/etc` installed a symlink to /etc. Both are refused before npm runs.
 */
let server: TestServer;
let outside: string;
before(async () => {
  outside = await tempDir('runnel-outside-');
  server = await startServer({ logging: { level: 'fatal' }, externalModules: { palette: { allowInstall: true, allowUpload: true } } });
});
after(async () => {
  await server.dispose();
  await rm(outside, { recursive: true, force: true });
});

function upload(pkg: Record<string, unknown>) {
  const tgz = rawTarball([
    { path: 'package/package.json', body: JSON.stringify({ 'node-red': { nodes: { x: 'x.js' } }, ...pkg }) },
    { path: 'package/x.js', body: 'module.exports = function (RED) {};' },
  ]);
  const boundary = `----runnel${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="tarball"; filename="m.tgz"\r\nContent-Type: application/gzip\r\n\r\n`),
    tgz,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return request(server.at('nodes'), { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
}

test('an uploaded module whose version climbs out of the user dir is refused and writes nothing', async () => {
  const rel = path.relative(path.join(server.userDir, 'nodes'), path.join(outside, 'escaped'));
  const res = await upload({ name: 'node-red-contrib-climb', version: `1.0.0/${rel}` });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.code, 'invalid_module');
  assert.deepEqual(await readdir(outside), []);
  assert.equal(existsSync(path.join(outside, 'escaped.tgz')), false);
});

for (const [label, spec] of [
  ['file:/etc', 'file:/etc'],
  ['link:', 'link:../../..'],
  ['a relative path', '../../../etc'],
  ['an absolute path', '/etc'],
  ['git', 'git+ssh://git@example.invalid/x.git'],
  ['github shorthand', 'someone/some-repo'],
  ['a URL', 'http://127.0.0.1:9/x.tgz'],
] as const) {
  test(`an uploaded module's dependency on ${label} is refused before npm runs`, async () => {
    const res = await upload({ name: 'node-red-contrib-deps', version: '1.0.0', dependencies: { evil: spec } });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.code, 'dependency_not_allowed');
    assert.equal(existsSync(path.join(server.userDir, 'node_modules', 'evil')), false);
    assert.equal(existsSync(path.join(server.userDir, 'node_modules', 'node-red-contrib-deps')), false);
  });
}

test('optional and peer dependencies of an uploaded module are checked too; registry ranges, tags and npm: aliases pass the check', async () => {
  const peer = await upload({ name: 'node-red-contrib-deps', version: '1.0.0', peerDependencies: { evil: 'file:/etc' } });
  assert.equal(peer.body.code, 'dependency_not_allowed');
  const optional = await upload({ name: 'node-red-contrib-deps', version: '1.0.0', optionalDependencies: { evil: 'github:a/b' } });
  assert.equal(optional.body.code, 'dependency_not_allowed');
  // Checked without npm (an install would fetch these from the registry).
  const pkg = parseNodeModulePackage({ name: 'x', version: '1.0.0', 'node-red': {}, peerDependencies: { a: '^1.2.0', b: 'latest', c: 'npm:d@~2', e: '*', f: '>=1 <3 || 4.x', g: '' } }, 'test');
  assert.doesNotThrow(() => assertInstallableManifest(pkg, server.instance.settings.externalModules.palette));
  const allowed = { ...server.instance.settings.externalModules.palette, allowNonRegistryDependencies: true };
  assert.doesNotThrow(() => assertInstallableManifest({ ...pkg, npmDependencies: [['evil', 'file:/etc']] }, allowed));
});
