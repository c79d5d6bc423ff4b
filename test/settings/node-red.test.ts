/**
 * Node-RED's own settings file runs Runnel unchanged. test/fixtures/node-red/settings.js is the stock
 * settings.js of node-red@4.1.15, byte for byte (test-ecosystem/node-red-settings-file.test.ts
 * compares it with the one npm installs; the package.json beside it makes it CommonJS, as in the
 * node-red package). Every key it documents — its section headers, its
 * commented-out examples and the keys it sets — is either honoured or named in the start warning.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { HONOURED, PARTLY, UNSUPPORTED, unsupportedSettings } from '../../src/settings/unsupported.js';
import { resolveSettings, SettingsError } from '../../src/settings/settings.js';
import { killRunnels, ROOT, spawnRunnelWith } from '../helpers/process.js';
import { withFreePort } from '../helpers/ports.js';
import { removeDir, tempDir } from '../helpers/dirs.js';
import { request, startServer } from '../helpers/server.js';

const STOCK = path.join(ROOT, 'test', 'fixtures', 'node-red', 'settings.js');
const WARNING = 'Settings Runnel does not support (ignored): ';

/** The keys the stock file documents: its section headers' lists and its commented-out top-level examples. */
async function documentedKeys(): Promise<Set<string>> {
  // The file's opening comment lists section names the same way; the keys come after it.
  const text = (await readFile(STOCK, 'utf8')).split('module.exports')[1];
  const keys = new Set<string>();
  for (const m of text.matchAll(/^ \* {2}- (\w+)(?: \(.*\))?\s*$/gm)) keys.add(m[1]);
  for (const m of text.matchAll(/^ {4}\/\/ ?(\w+)\s*:/gm)) keys.add(m[1]);
  return keys;
}

/** The stock file as Node-RED loads it (require), with PORT set as a user of it would. */
function loadStock(port: string): Record<string, unknown> {
  const saved = process.env.PORT;
  process.env.PORT = port;
  try {
    const require = createRequire(import.meta.url);
    delete require.cache[STOCK];
    return { ...(require(STOCK) as Record<string, unknown>) };
  } finally {
    if (saved === undefined) delete process.env.PORT;
    else process.env.PORT = saved;
  }
}

/** Runnel's JSON log lines in a process's output. */
function logLines(output: string): { level: number; msg: string }[] {
  return output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string });
}

describe("Node-RED's stock settings.js", () => {
  after(killRunnels);

  it('every key it documents is honoured or named in the start warning, and no key is both', async () => {
    const keys = await documentedKeys();
    assert.ok(keys.size > 50, `found ${keys.size} documented keys`);
    const partlyTop = new Set(PARTLY.map(([dotted]) => dotted.split('.')[0]));
    const undecided = [...keys].filter((key) => !HONOURED.includes(key) && !UNSUPPORTED.includes(key) && !partlyTop.has(key));
    assert.deepEqual(undecided, []);
    assert.deepEqual(UNSUPPORTED.filter((key) => HONOURED.includes(key)), []);
    for (const key of UNSUPPORTED) assert.deepEqual(unsupportedSettings({ [key]: 1 }), [key]);
    // A key honoured only in part is named for the values Runnel does not act on.
    assert.deepEqual(unsupportedSettings({ lang: 'de' }), ['lang']);
    assert.deepEqual(unsupportedSettings({ lang: 'en-US' }), []);
    assert.deepEqual(unsupportedSettings({ telemetry: { enabled: true } }), ['telemetry.enabled']);
    assert.deepEqual(unsupportedSettings({ editorTheme: { projects: { enabled: true } } }), []);
    // A custom logger is honoured; an entry without a handler is no logger, in Node-RED either.
    assert.deepEqual(unsupportedSettings({ logging: { console: { level: 'info', audit: false, metrics: false }, file: { level: 'info', handler: () => () => {} } } }), []);
    assert.deepEqual(unsupportedSettings({ logging: { file: { level: 'info' } } }), ['logging.file']);
  });

  it('accepts what Node-RED accepts: numeric strings for numbers, and its log level names', () => {
    const stock = resolveSettings(loadStock('1999'), ROOT);
    assert.equal(stock.uiPort, 1999);
    assert.equal(stock.logging.level, 'info');
    const numbers = resolveSettings({ uiPort: ' 8080 ', nodeCloseTimeout: '5000', adminAuth: { type: 'credentials', users: [], sessionExpiryTime: '3600' } }, ROOT);
    assert.deepEqual([numbers.uiPort, numbers.nodeCloseTimeout, numbers.adminAuth?.sessionExpiryTime], [8080, 5000, 3600]);
    for (const bad of ['abc', '', '80.5', '70000']) {
      assert.throws(() => resolveSettings({ uiPort: bad }, ROOT), (e) => e instanceof SettingsError && /uiPort/.test(e.message), bad);
    }
    const levels = { off: 'silent', fatal: 'fatal', error: 'error', warn: 'warn', info: 'info', debug: 'debug', trace: 'trace', metric: 'trace', audit: 'trace' };
    for (const [nodeRed, runnel] of Object.entries(levels)) {
      assert.equal(resolveSettings({ logging: { console: { level: nodeRed } } }, ROOT).logging.level, runnel, nodeRed);
    }
    assert.throws(() => resolveSettings({ logging: { console: { level: 'loud' } } }, ROOT), /logging\.console\.level must be one of .*off/);
    // Node-RED turns the admin or node routes off with false; Runnel says it cannot rather than serve them anyway.
    assert.throws(() => resolveSettings({ httpAdminRoot: false }, ROOT), /httpAdminRoot: false .* not supported/);
    assert.throws(() => resolveSettings({ httpNodeRoot: false }, ROOT), /httpNodeRoot: false .* not supported/);
  });

  it('starts Runnel unchanged with PORT set, with no warning: it sets no key Runnel ignores', async () => {
    const dir = await tempDir();
    try {
      const settingsFile = path.join(dir, 'settings.js');
      await copyFile(STOCK, settingsFile);
      // PORT is the test: a port taken since the probe makes Runnel exit "address already in use", and it starts again on another.
      const { runnel, port } = await withFreePort(async (free) => ({
        runnel: await spawnRunnelWith(['start', '--settings', settingsFile, '--user-dir', path.join(dir, 'user')], dir, { PORT: String(free) }),
        port: String(free),
      }));
      assert.equal(new URL(runnel.url).port, port);
      const settings = await request(`${runnel.url}settings`);
      assert.equal(settings.status, 200, settings.text);
      runnel.child.kill('SIGTERM');
      assert.equal(await runnel.exited, 0, runnel.output());

      // Its logging.console.audit and metrics are honoured: nothing it sets is ignored, so no warning.
      const raw = loadStock(port);
      assert.deepEqual(unsupportedSettings(raw), []);
      assert.deepEqual(logLines(runnel.output()).filter((l) => l.msg.startsWith(WARNING)), [], runnel.output());
      const silent = Object.keys(raw).filter((key) => !HONOURED.includes(key));
      assert.deepEqual(silent, [], 'every key the file sets is honoured');
    } finally {
      await removeDir(dir);
    }
  });

  it('logging.console.level "off" writes no log line but the start summary', async () => {
    const dir = await tempDir();
    try {
      const settingsFile = path.join(dir, 'settings.js');
      const stock = await readFile(STOCK, 'utf8');
      const off = stock.replace('level: "info",', 'level: "off",');
      assert.notEqual(off, stock);
      await writeFile(settingsFile, off);
      const runnel = await spawnRunnelWith(['start', '--settings', settingsFile, '--user-dir', path.join(dir, 'user')], dir, { PORT: '0' });
      assert.equal((await request(`${runnel.url}settings`)).status, 200);
      runnel.child.kill('SIGTERM');
      assert.equal(await runnel.exited, 0, runnel.output());
      // The start summary is what the program answers, whatever the level: tools read its URL.
      assert.deepEqual(logLines(runnel.output()).filter((l) => !/ listening on /.test(l.msg)), []);
      assert.match(runnel.output(), /listening on/);
    } finally {
      await removeDir(dir);
    }
  });

  it('exportGlobalContextKeys: false keeps functionGlobalContext out of the context sidebar, as in Node-RED', async () => {
    const seeded = { functionGlobalContext: { lib: 'seed' } };
    for (const [extra, listed] of [[{}, true], [{ exportGlobalContextKeys: true }, true], [{ exportGlobalContextKeys: false }, false]] as const) {
      const server = await startServer({ ...seeded, ...extra });
      try {
        const global = await request(server.at('context/global'));
        assert.equal(global.status, 200, global.text);
        // One store, the default memory store, whatever its name.
        const [values] = Object.values(global.body as Record<string, Record<string, unknown>>);
        assert.equal(Object.hasOwn(values, 'lib'), listed, JSON.stringify(extra));
        assert.deepEqual(server.logs.filter((l) => l.includes(WARNING)), []);
      } finally {
        await server.dispose();
      }
    }
  });
});
