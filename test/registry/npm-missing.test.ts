import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, link, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request, tempDir } from '../helpers/server.js';
import { killRunnels, spawnRunnelWith, type RunnelProcess } from '../helpers/process.js';
import { removeDir } from '../helpers/dirs.js';
import { findNpm } from '../../src/registry/npm.js';

/**
 * A Node installed without npm: the node executable alone in a directory (a hard link, or a copy
 * across file systems, so its execPath is there and no npm is beside it) and PATH set to that
 * directory only. The real process starts, says once that npm is missing, and installs answer
 * npm_not_found instead of 500.
 */
let dir: string;
let bin: string;
let node: string;
let runnel: RunnelProcess;

async function start(name: string, env: Record<string, string>): Promise<RunnelProcess> {
  const settings = path.join(dir, `${name}.json`);
  await writeFile(settings, JSON.stringify({ uiPort: 0, uiHost: '127.0.0.1', userDir: path.join(dir, name), logging: { level: 'warn' } }));
  return spawnRunnelWith(['start', '--settings', settings], dir, env, node);
}

before(async () => {
  dir = await tempDir();
  bin = path.join(dir, 'bin');
  await mkdir(bin);
  node = path.join(bin, 'node');
  await link(process.execPath, node).catch(() => copyFile(process.execPath, node));
  runnel = await start('user', { PATH: bin });
});
after(async () => {
  killRunnels();
  await removeDir(dir);
});

describe('module installs where Node has no npm', () => {
  test('the start warns once, and an install answers 503 npm_not_found saying where npm was looked for', async () => {
    assert.equal(runnel.output().match(/npm was not found/g)?.length, 1, runnel.output());
    const res = await request(new URL('nodes', runnel.url).href, { method: 'POST', json: { module: 'node-red-contrib-anything' } });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.code, 'npm_not_found');
    assert.match(res.body.message, /npm was not found \(beside .*bin\/node, as a dependency of Runnel, or on PATH\)/);
    const again = await request(new URL('nodes', runnel.url).href, { method: 'POST', json: { module: 'node-red-contrib-other' } });
    assert.equal(again.body.code, 'npm_not_found');
    assert.equal(runnel.output().match(/npm was not found/g)?.length, 1, `warned once, at start:\n${runnel.output()}`);
  });

  test('npm on PATH is found when none is beside node: the install runs npm', async () => {
    // The npm PATH usually has: a link named npm to npm-cli.js.
    const npmBin = path.join(dir, 'npm-bin');
    await mkdir(npmBin);
    await symlink(findNpm()!.args[0], path.join(npmBin, 'npm'));
    // npm's registry is a closed local port, so npm runs and fails at once, offline.
    const withNpm = await start('with-npm', { PATH: `${bin}${path.delimiter}${npmBin}`, npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0' });
    assert.doesNotMatch(withNpm.output(), /npm was not found/);
    const res = await request(new URL('nodes', withNpm.url).href, { method: 'POST', json: { module: 'node-red-contrib-anything' } });
    assert.equal(res.body.code, 'install_failed', res.text);
  });
});
