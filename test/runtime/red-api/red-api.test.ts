import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Hooks } from '../../../src/runtime/red-api/hooks.js';
import { MessageCatalogs, createTranslator } from '../../../src/runtime/red-api/i18n.js';
import { SettingsView } from '../../../src/runtime/red-api/settings-view.js';
import { createRedApi } from '../../../src/runtime/red-api/red-api.js';
import { resolveSettings } from '../../../src/settings/settings.js';
import { fakeRuntime } from '../../registry/support.js';
import { removeDir, tempDir } from '../../helpers/dirs.js';

describe('RED.hooks', () => {
  it('runs hooks in order, keeps an active flag per hook point, and removes by label', async () => {
    const hooks = new Hooks();
    const seen: string[] = [];
    assert.equal(hooks.active.onSend, false);
    assert.equal(hooks.anyMessageHook, false);
    hooks.add('onSend', (p: string[]) => void p.push('plain'));
    hooks.add('onSend.async', async (p: string[]) => void p.push('async'));
    hooks.add('onSend.cb', (p: string[], done?: (r?: unknown) => void) => {
      p.push('callback');
      done!();
    });
    assert.equal(hooks.active.onSend, true);
    assert.equal(hooks.anyMessageHook, true);
    assert.equal(hooks.has('onSend'), true);
    assert.equal(hooks.has('onSend.cb'), true);
    assert.equal(hooks.has('preRoute'), false);
    await hooks.trigger('onSend', seen);
    assert.deepEqual(seen, ['plain', 'async', 'callback']);
    hooks.remove('*.async');
    hooks.remove('onSend.cb');
    assert.equal(hooks.has('onSend.async'), false);
    assert.equal(hooks.has('onSend'), true, 'the unlabelled hook stays');
    assert.throws(() => hooks.remove('onSend'), /Cannot remove hook without label/);
  });

  it('halts the chain on false, reports errors, and refuses unknown points and duplicate labels', async () => {
    const hooks = new Hooks();
    let reached = false;
    hooks.add('preDeliver.stop', () => false);
    hooks.add('preDeliver.after', () => {
      reached = true;
    });
    const results: unknown[] = [];
    hooks.trigger('preDeliver', {}, (r) => results.push(r));
    assert.deepEqual(results, [false]);
    assert.equal(reached, false);
    hooks.add('onReceive.boom', () => {
      throw new Error('boom');
    });
    await assert.rejects(hooks.trigger('onReceive', {}), /boom/);
    assert.throws(() => hooks.add('onNothing', () => {}), /Invalid hook 'onNothing'/);
    assert.throws(() => hooks.add('preDeliver.stop', () => {}), /Hook preDeliver.stop already registered/);
    const direct: unknown[] = [];
    hooks.trigger('postInstall', {}, (r) => direct.push(r));
    assert.deepEqual(direct, [undefined], 'a point without hooks completes synchronously');
  });
});

describe('RED._ catalogs', () => {
  it('falls back per key from the runtime language to en-US, and returns a missing key without its namespace', () => {
    const catalogs = new MessageCatalogs('de-CH');
    catalogs.register('mod/set', { 'en-US': { a: { hi: 'Hello __who__', only: 'english' } }, de: { a: { hi: 'Hallo __who__' } } });
    const t = createTranslator('mod/set', catalogs);
    assert.deepEqual(catalogs.languages, ['de-CH', 'de', 'en-US', 'en']);
    assert.equal(t('a.hi', { who: 'Ada' }), 'Hallo Ada');
    assert.equal(t('a.only'), 'english');
    assert.equal(t('a.hi'), 'Hallo __who__');
    assert.equal(t('other/ns:a.x'), 'a.x');
    assert.equal(createTranslator('elsewhere', catalogs)('mod/set:a.only'), 'english');
  });
});

describe('RED.settings', () => {
  it('is a view with an absolute userDir, custom keys, get(), and registered node settings', async () => {
    const settings = resolveSettings({ userDir: 'relative-dir', logging: { level: 'silent' }, myNodeSpeed: 5, credentialSecret: 'x' });
    const view = new SettingsView(settings, '4.1.15');
    const s = view.view as Record<string, any>;
    assert.equal(s.userDir, path.resolve('relative-dir'));
    assert.equal(s.myNodeSpeed, 5);
    assert.equal(s.get('myNodeSpeed'), 5);
    assert.equal(s.credentialSecret, undefined, 'secrets are not visible to nodes');
    assert.equal(s.version, '4.1.15');
    assert.throws(() => {
      s.userDir = '/elsewhere';
    }, TypeError);
    assert.throws(() => s.set('userDir', '/x'), /read-only/, 'names the settings file sets are read-only, thrown at once as in Node-RED');
    view.registerNodeSettings('my-node', { myNodeColour: { value: 'red', exportable: true }, myNodeSpeed: { value: 1, exportable: true }, myNodeHidden: { value: 2 } });
    assert.equal(s.myNodeColour, 'red');
    assert.equal(s.myNodeSpeed, 5, 'the settings file wins over the default');
    assert.deepEqual(view.exportNodeSettings({ myNodeColour: 'kept' }), { myNodeColour: 'kept', myNodeSpeed: 5 });
    assert.throws(() => view.registerNodeSettings('my-node', { other: { value: 1 } }), /Properties for this node must start with 'myNode'/);
  });
});

describe('createRedApi', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => removeDir(dir));

  it('RED.log.log takes {level, msg} with numeric or named levels, and a bare string at info', () => {
    const runtime = fakeRuntime(dir);
    const lines: [string, unknown][] = [];
    const spy = (level: string) => (_obj: unknown, msg: unknown) => lines.push([level, msg]);
    (runtime as unknown as { log: unknown }).log = Object.fromEntries(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'audit'].map((l) => [l, spy(l)]));
    const set = runtime.registry.addModule({ name: 'm', version: '1.0.0', builtin: false }) && runtime.registry.addSet('m', 's');
    const RED = createRedApi(runtime, set);
    RED.log.log({ level: RED.log.WARN, msg: 'numeric' });
    RED.log.log({ level: 'debug', msg: 'named' });
    RED.log.log('cron-plus style');
    RED.log.log({ level: RED.log.METRIC, msg: 'metric' });
    RED.log.audit({ event: 'x', msg: 'audited' });
    assert.deepEqual(lines, [['warn', 'numeric'], ['debug', 'named'], ['info', 'cron-plus style'], ['audit', 'audited']]);
  });

  it('RED.require resolves from the module directory first, then the user directory', async () => {
    const moduleDir = path.join(dir, 'mod');
    for (const [base, value] of [[moduleDir, 'module'], [dir, 'user']] as const) {
      await mkdir(path.join(base, 'node_modules', 'shared-dep'), { recursive: true });
      await writeFile(path.join(base, 'node_modules', 'shared-dep', 'index.js'), `module.exports = ${JSON.stringify(value)};`);
    }
    await mkdir(path.join(dir, 'node_modules', 'user-only'), { recursive: true });
    await writeFile(path.join(dir, 'node_modules', 'user-only', 'index.js'), 'module.exports = "user-only";');
    const runtime = fakeRuntime(dir);
    runtime.registry.addModule({ name: 'm', version: '1.0.0', builtin: false });
    const RED = createRedApi(runtime, runtime.registry.addSet('m', 's'), { moduleDir });
    assert.equal(RED.require('shared-dep'), 'module');
    assert.equal(RED.require('user-only'), 'user-only');
    assert.throws(() => RED.require('no-such-dep-anywhere'), { code: 'MODULE_NOT_FOUND' });
    assert.equal(RED.version(), '5.0.7');
    assert.equal(RED.hooks, runtime.services.hooks);
  });
});
