import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { writeFile, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { verify } from '../src/auth/bcrypt.js';
import { resolveSettings, SettingsError } from '../src/settings/settings.js';
import { request } from './helpers/server.js';
import { after } from 'node:test';
import { runCli, spawnRunnel, killRunnels, BIN } from './helpers/process.js';
import { tempDir, removeDir } from './helpers/dirs.js';
import { deploy } from './helpers/deploy.js';

describe('command line', () => {
  after(killRunnels);
  test('bad settings exit 1 with one clear line', async () => {
    const dir = await tempDir();
    try {
      // What the command line itself decides: a setting refused (one case stands for all of
      // resolveSettings' refusals, checked in-process below), a file it cannot read, a bad flag.
      const cases: [string, RegExp][] = [
        [JSON.stringify({ uiPort: 'abc' }), /uiPort/],
        ['{ not json', /cannot read settings file/],
      ];
      for (const [content, pattern] of cases) {
        const file = path.join(dir, 'settings.json');
        await writeFile(file, content);
        const r = await runCli(['start', '--settings', file]);
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assert.match(r.stderr, pattern);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      }
      const missing = await runCli(['start', '--settings', path.join(dir, 'nope.json')]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /cannot read settings file/);
      const badFlag = await runCli(['start', '--port', 'x']);
      assert.equal(badFlag.code, 1);
      assert.match(badFlag.stderr, /--port/);
    } finally {
      await removeDir(dir);
    }
  });

  test('the settings refusals the command line prints are one line each', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ adminAuth: { type: 'saml' } }, /adminAuth\.type/],
      // A JSON file cannot hold the Passport strategy class.
      [{ adminAuth: { type: 'strategy' } }, /adminAuth\.strategy must be/],
      [{ adminAuth: { type: 'credentials', users: [{ username: 'a', password: 'plain' }] } }, /bcrypt/],
      [{ envVarExcludes: 'SECRET' }, /envVarExcludes/],
      [{ messageQueueLimit: 10 }, /messageQueueLimit/],
      [{ httpNodeRouteWait: -1 }, /httpNodeRouteWait/],
      [{ safeMode: 'yes' }, /safeMode/],
    ];
    for (const [raw, pattern] of cases) {
      assert.throws(() => resolveSettings(raw), (e: unknown) => e instanceof SettingsError && pattern.test(e.message) && !e.message.includes('\n'), pattern.source);
    }
  });

  test('a port in use exits 1 with one clear line', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const dir = await tempDir();
    try {
      const file = path.join(dir, 'settings.json');
      await writeFile(file, JSON.stringify({ userDir: path.join(dir, 'user'), uiHost: '127.0.0.1' }));
      const r = await runCli(['start', '--settings', file, '--port', String(port)]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /address already in use/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    } finally {
      blocker.close();
      await removeDir(dir);
    }
  });

  test('hash-pw reads stdin and prints a bcrypt hash of it', async () => {
    const r = await runCli(['hash-pw'], { input: 'correct horse\n' });
    assert.equal(r.code, 0, r.stderr);
    const hash = r.stdout.trim();
    assert.match(hash, /^\$2[aby]\$10\$/);
    assert.equal(await verify('correct horse', hash), true);
  });

  test('with no settings it starts with embedded defaults in ./.runnel, flags override, SIGTERM exits 0', async () => {
    const dir = await tempDir();
    try {
      const run = await spawnRunnel(dir, {}, []);
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
      const plain = await import('node:child_process').then(({ spawn }) => {
        const child = spawn(process.execPath, [BIN, '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
        return new Promise<{ out: string; code: number | null }>((resolve) => {
          let out = '';
          let signalled = false;
          child.stdout.on('data', (d) => {
            out += d;
            if (!signalled && /listening on http:\/\/127\.0\.0\.1:\d+\//.test(out)) {
              signalled = true;
              child.kill('SIGINT');
            }
          });
          child.stderr.on('data', (d) => (out += d));
          child.on('exit', (code) => resolve({ out, code }));
        });
      });
      assert.equal(plain.code, 0, plain.out);
      assert.match(plain.out, /listening on http:\/\/127\.0\.0\.1:\d+\//);
      assert.ok((await readdir(path.join(dir, '.runnel'))).includes('.config.runtime.json'));
    } finally {
      await removeDir(dir);
    }
  });

  test('SIGINT, SIGTERM and SIGHUP (a closed terminal) each stop gracefully: close handlers run and the file context is saved', async () => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const dir = await tempDir();
      try {
        // The file store's default flush interval is 30 s: only the stop writes what came since.
        const run = await spawnRunnel(dir, { contextStorage: { default: { module: 'localfilesystem' } } });
        await deploy(run, [
          { id: 'in', type: 'http in', z: 't', url: '/write', method: 'get', wires: [['fn']] },
          {
            id: 'fn', type: 'function', z: 't', outputs: 1, wires: [['out']],
            func: 'global.set("written", msg.req.query.v); msg.payload = "ok"; return msg;',
            // The warning writes to the log: after a hangup, to output nobody reads any more.
            finalize: 'node.warn("finalize-ran"); global.set("closed", "yes");',
          },
          { id: 'out', type: 'http response', z: 't', statusCode: '', headers: {}, wires: [] },
        ], { tab: 't' });
        const res = await request(new URL(`write?v=before-${signal}`, run.url).href);
        assert.equal(res.text, 'ok');
        // A closing terminal takes the process's output with it before the hangup arrives.
        if (signal === 'SIGHUP') {
          run.child.stdout!.destroy();
          run.child.stderr!.destroy();
        }
        run.child.kill(signal);
        assert.equal(await run.exited, 0, `${signal}: ${run.output()}`);
        const saved = JSON.parse(await readFile(path.join(dir, 'user', 'context', 'global', 'global.json'), 'utf8')) as Record<string, unknown>;
        assert.deepEqual(saved, { written: `before-${signal}`, closed: 'yes' }, signal);
      } finally {
        await removeDir(dir);
      }
    }
  });

  test('SIGTERM runs the nodes\' close handlers and keeps the deployed flows', async () => {
    const dir = await tempDir();
    try {
      const run = await spawnRunnel(dir, { logging: { level: 'warn' } });
      const flows = [
        { id: 't1', type: 'tab' },
        { id: 'f1', type: 'function', z: 't1', x: 1, y: 1, wires: [], func: 'return msg;', finalize: "node.warn('finalize-ran');", outputs: 1 },
      ];
      await deploy(run, flows);
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0);
      assert.match(run.output(), /finalize-ran/);
      const again = await spawnRunnel(dir, {});
      try {
        const back = await request(new URL('flows', again.url).href);
        assert.deepEqual(back.body, flows);
      } finally {
        again.child.kill('SIGTERM');
        await again.exited;
      }
    } finally {
      await removeDir(dir);
    }
  });
});
