import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { assertAllowed, parseInstallTarget } from '../../src/registry/installer.js';
import { describeFailure } from '../../src/registry/npm.js';
import { resolveSettings } from '../../src/settings/settings.js';
import { request, startServer } from '../helpers/server.js';
import { copyFixture } from './support.js';
import { removeDir, tempDir } from '../helpers/dirs.js';

const palette = (p: Record<string, unknown>) => resolveSettings({ externalModules: { palette: p } }).externalModules.palette;

describe('parseInstallTarget', () => {
  it('accepts package names, scoped names and absolute paths', () => {
    assert.deepEqual(parseInstallTarget('node-red-node-random', undefined), { kind: 'registry', name: 'node-red-node-random', version: undefined });
    assert.deepEqual(parseInstallTarget('@scope/pkg', '1.2.3'), { kind: 'registry', name: '@scope/pkg', version: '1.2.3' });
    assert.deepEqual(parseInstallTarget('/opt/modules/x', undefined), { kind: 'path', dir: '/opt/modules/x' });
  });

  it('refuses version qualifiers, URLs, tarball paths, relative paths and invalid names', () => {
    for (const m of ['pkg@1.0.0', '@scope/pkg@latest', 'https://host/x.tgz', 'file:../x', 'git+https://host/r.git', '/tmp/x.tgz', '../x', 'Bad Name', 'UPPER']) {
      assert.throws(() => parseInstallTarget(m, undefined), { code: 'invalid_module_name', status: 400 }, m);
    }
  });

  it('refuses a version that is not semver', () => {
    assert.throws(() => parseInstallTarget('pkg', 'not a version; rm -rf'), { code: 'invalid_request', status: 400 });
  });
});

describe('assertAllowed', () => {
  it('applies allow and deny patterns with *', () => {
    assert.doesNotThrow(() => assertAllowed('anything', palette({})));
    assert.doesNotThrow(() => assertAllowed('node-red-contrib-x', palette({ allowList: ['node-red-contrib-*'] })));
    assert.throws(() => assertAllowed('other', palette({ allowList: ['node-red-contrib-*'] })), { code: 'install_not_allowed', status: 403 });
    assert.throws(() => assertAllowed('node-red-contrib-x', palette({ denyList: ['*-x'] })), { code: 'install_not_allowed' });
    assert.throws(() => assertAllowed('a.b', palette({ denyList: ['a.b'] })), { code: 'install_not_allowed' });
    assert.doesNotThrow(() => assertAllowed('axb', palette({ denyList: ['a.b'] })), 'a dot is literal');
  });
});

describe('describeFailure', () => {
  it('reads npm error code and the explaining line', () => {
    const lines = [
      'code E404',
      '404 Not Found - GET https://registry.npmjs.org/no-such-pkg',
      '404',
      'A complete log of this run can be found in: /root/.npm/_logs/x.log',
    ];
    assert.deepEqual(describeFailure(lines), { errorCode: 'E404', summary: '404 Not Found - GET https://registry.npmjs.org/no-such-pkg' });
    assert.deepEqual(describeFailure(['code ETARGET', 'notarget No matching version found for x@99.0.0.']), {
      errorCode: 'ETARGET',
      summary: 'notarget No matching version found for x@99.0.0.',
    });
  });
});

describe('install timeout', { timeout: 60_000 }, () => {
  it('kills npm, answers 504, rolls back and lets the queue move on', async () => {
    const work = await tempDir();
    const server = await startServer({ externalModules: { palette: { installTimeout: 1 } } });
    try {
      const dir = await copyFixture('node-red-contrib-upper', work);
      const [a, b] = await Promise.all([
        request(server.at('nodes'), { method: 'POST', json: { module: dir } }),
        request(server.at('nodes'), { method: 'POST', json: { module: dir } }),
      ]);
      for (const res of [a, b]) {
        assert.equal(res.status, 504);
        assert.equal(res.body.code, 'install_timeout');
      }
      // The user dir had no package.json before: none is left either.
      await assert.rejects(readFile(path.join(server.userDir, 'package.json')), { code: 'ENOENT' });
      await assert.rejects(readFile(path.join(server.userDir, 'node_modules', 'node-red-contrib-upper', 'package.json')));
      assert.equal(server.instance.runtime.registry.modules.has('node-red-contrib-upper'), false);
    } finally {
      await server.dispose();
      await removeDir(work);
    }
  });
});
