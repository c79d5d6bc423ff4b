import assert from 'node:assert/strict';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { formatLogLine } from '../src/base/log-text.js';
import { resolveSettings, SettingsError } from '../src/settings/settings.js';
import { formatStartSummary, startSummary } from '../src/start-summary.js';
import { RUNNEL_VERSION } from '../src/base/version.js';
import { removeDir, tempDir } from './helpers/dirs.js';
import { killRunnels, spawnRunnel } from './helpers/process.js';
import { adminAuth } from './helpers/users.js';

describe('what a start says it loaded', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  const fresh = async () => {
    const dir = await tempDir('runnel-summary-');
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    killRunnels();
    await Promise.all(dirs.map(removeDir));
  });

  it('stdout not a terminal: every line is JSON, the summary one of them', async () => {
    const dir = await fresh();
    const run = await spawnRunnel(dir, { adminAuth: adminAuth(), credentialSecret: 'k', logging: { level: 'info' } });
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
    const lines = run.output().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const summary = lines.find((l) => typeof l.msg === 'string' && l.msg.includes('listening on'))!;
    assert.deepEqual(summary, {
      level: 30,
      time: summary.time,
      msg: `Runnel ${RUNNEL_VERSION} listening on ${run.url}`,
      url: run.url,
      settingsFile: path.join(dir, 'settings.json'),
      userDir: path.join(dir, 'user'),
      storage: `files in the user dir (${path.join(dir, 'user', 'flows.json')})`,
      credentialKey: `credentialSecret from ${path.join(dir, 'settings.json')}`,
      adminAuth: 'adminAuth: 2 users',
    });
  });

  it('logging.format "text": people-readable lines and the summary as a short block', async () => {
    const dir = await fresh();
    const run = await spawnRunnel(dir, { logging: { level: 'warn', format: 'text' } });
    try {
      const out = run.output();
      const userDir = path.join(dir, 'user');
      assert.match(out, /^\S+Z \[warn\] Generated a credential key and saved it in \.config\.runtime\.json/m);
      assert.ok(out.includes([
        `Runnel ${RUNNEL_VERSION} listening on ${run.url}`,
        `  settings     ${path.join(dir, 'settings.json')}`,
        `  user dir     ${userDir}`,
        `  storage      files in the user dir (${path.join(userDir, 'flows.json')})`,
        `  credentials  generated key (_credentialSecret in ${path.join(userDir, '.config.runtime.json')}); set credentialSecret to choose your own`,
        '  admin auth   off: no adminAuth, anyone who can reach the address administers this runtime',
      ].join('\n')), out);
      assert.doesNotMatch(out, /^\{/m, 'no JSON lines');
    } finally {
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
    }
  });

  it('a logging.format other than text or json is refused at start', () => {
    // The command line prints a SettingsError's message as its one line (cli.test.ts, with a real process).
    assert.throws(() => resolveSettings({ logging: { format: 'xml' } }), (e: unknown) => e instanceof SettingsError && e.message === 'logging.format must be "text" or "json"');
  });

  it('names the storage without the database password, and the other key sources', () => {
    const settings = resolveSettings({
      userDir: '/srv/runnel', storage: { type: 'postgres', url: 'postgresql://runnel:hunter2@db.internal:5433/flows', schema: 'prod' },
      adminAuth: adminAuth({ default: { permissions: 'read' } }),
    }, '/', undefined, {});
    const summary = startSummary(settings, { type: 'system', secret: 'x', legacySecrets: [] });
    assert.equal(summary.storage, 'postgres db.internal:5433/flows, schema prod');
    assert.equal(summary.credentialKey, 'generated key (_credentialSecret in the database); set credentialSecret to choose your own');
    assert.equal(summary.adminAuth, 'adminAuth: 2 users, anonymous "read"');
    assert.equal(summary.settingsFile, null);
    assert.equal(startSummary(settings, { type: 'disabled', secret: undefined, legacySecrets: [] }).credentialKey, 'none: credentialSecret is false, credentials are stored unencrypted');
    assert.match(formatStartSummary('http://127.0.0.1:1880/', summary, 'text'), /\n {2}settings {5}none \(embedded defaults\)\n/);
    assert.doesNotMatch(formatStartSummary('http://127.0.0.1:1880/', summary, 'json'), /hunter2/);
  });

  it('text log lines: level name, message, other fields, the error stack indented', () => {
    assert.equal(formatLogLine('{"level":40,"time":"T","msg":"careful","node":"n1"}'), 'T [warn] careful {"node":"n1"}\n');
    assert.equal(formatLogLine('{"level":45,"time":"T","msg":"auth.login","user":"a"}'), 'T [audit] auth.login {"user":"a"}\n');
    assert.equal(
      formatLogLine(JSON.stringify({ level: 50, time: 'T', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.js:1:1)' } })),
      'T [error] boom\n    Error: boom\n        at f (x.js:1:1)\n',
    );
    assert.equal(formatLogLine('not json'), 'not json');
  });
});
