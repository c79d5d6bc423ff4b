import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadSettingsFile } from '../../src/settings/file.js';
import { SettingsError } from '../../src/settings/settings.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { killRunnels, runCli, spawnRunnelWith } from '../helpers/process.js';
import { request } from '../helpers/server.js';
import { adminAuth } from '../helpers/users.js';

/** A Node-RED settings.js: CommonJS, reading the environment and requiring core modules. */
const nodeRedSettings = (extra = '') => `const path = require('path');
module.exports = {
    uiPort: 0,
    flowFile: path.basename('flows.json'),${extra}
    adminAuth: ${JSON.stringify(adminAuth())},
    logging: { console: { level: 'warn' } },
};
`;

describe('the user dir\'s settings.js, as Node-RED reads it', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  const fresh = async () => {
    const dir = await tempDir('runnel-settingsjs-');
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    killRunnels();
    await Promise.all(dirs.map(removeDir));
  });

  it('--user-dir DIR without --settings reads DIR/settings.js', async () => {
    const dir = await fresh();
    const userDir = path.join(dir, 'node-red');
    await mkdir(userDir);
    await writeFile(path.join(userDir, 'settings.js'), nodeRedSettings());
    const run = await spawnRunnelWith(['start', '--user-dir', userDir], dir);
    try {
      assert.equal((await request(new URL('flows', run.url).href)).status, 401, 'adminAuth of settings.js is on');
      assert.match(run.output(), new RegExp(`"settingsFile":"${path.join(userDir, 'settings.js')}"`));
      assert.match(run.output(), new RegExp(`"userDir":"${userDir}"`));
    } finally {
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
    }
  });

  it('without arguments reads ./.runnel/settings.js, CommonJS even in an ES-module package', async () => {
    const dir = await fresh();
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await mkdir(path.join(dir, '.runnel'));
    await writeFile(path.join(dir, '.runnel', 'settings.js'), nodeRedSettings());
    const run = await spawnRunnelWith([], dir);
    try {
      assert.equal((await request(new URL('flows', run.url).href)).status, 401);
      assert.match(run.output(), new RegExp(`"userDir":"${path.join(dir, '.runnel')}"`));
    } finally {
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
    }
  });

  it('--settings FILE wins over the user dir\'s settings.js', async () => {
    const dir = await fresh();
    await mkdir(path.join(dir, 'u'));
    await writeFile(path.join(dir, 'u', 'settings.js'), nodeRedSettings());
    await writeFile(path.join(dir, 'open.json'), JSON.stringify({ uiPort: 0, logging: { level: 'warn' } }));
    const run = await spawnRunnelWith(['start', '--settings', path.join(dir, 'open.json'), '--user-dir', path.join(dir, 'u')], dir);
    try {
      assert.equal((await request(new URL('flows', run.url).href)).status, 200);
      assert.match(run.output(), new RegExp(`"settingsFile":"${path.join(dir, 'open.json')}"`));
    } finally {
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
    }
  });

  it('a settings.js that does not load is one clear line and exit 1: where the syntax error is, what threw', async () => {
    const dir = await fresh();
    await writeFile(path.join(dir, 'settings.js'), 'module.exports = {\n  uiPort: 0,\n  adminAuth: {\n    type: "credentials",,\n  }\n}\n');
    const r = await runCli(['start', '--user-dir', dir], { cwd: dir });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr.trim(), /settings\.js: Unexpected token ',' at line 4, column 25$/);
    // The command line prints a SettingsError as that one line: the other failures need no process each
    // (a folder each, as a process would load each file afresh).
    const cases: [string, RegExp][] = [
      ["throw new Error('PORT is not set');\n", /settings\.js: PORT is not set$/],
      ["module.exports = require('./missing-helper');\n", /settings\.js: Cannot find module '\.\/missing-helper'/],
      ['module.exports = 42;\n', /settings file .*settings\.js must export an object$/],
    ];
    for (const [i, [content, pattern]] of cases.entries()) {
      const file = path.join(dir, `case-${i}`, 'settings.js');
      await mkdir(path.dirname(file));
      await writeFile(file, content);
      await assert.rejects(loadSettingsFile(file), (e: Error) => {
        assert.ok(e instanceof SettingsError, String(e));
        assert.doesNotMatch(e.message, /\n/);
        assert.match(e.message, pattern);
        return true;
      });
    }
  });

  it('an ES-module settings file with a syntax error says where, too', async () => {
    const dir = await fresh();
    const file = path.join(dir, 'settings.mjs');
    await writeFile(file, 'export default {\n  uiPort: 1880\n  uiHost: "127.0.0.1",\n};\n');
    await assert.rejects(loadSettingsFile(file), (e: Error) => {
      assert.ok(e instanceof SettingsError);
      assert.match(e.message, /settings\.mjs: Unexpected identifier.* at line 3, column 3$/);
      return true;
    });
  });
});
