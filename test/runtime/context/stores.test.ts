import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { resolveSettings } from '../../../src/settings/settings.js';
import { ContextManager } from '../../../src/runtime/context/context.js';
import type { ContextStore } from '../../../src/runtime/context/store.js';
import { MemoryStore } from '../../../src/runtime/context/memory-store.js';
import { eventually, request, startServer, type TestServer } from '../../helpers/server.js';
import { killRunnels, runCli, spawnRunnel } from '../../helpers/process.js';
import { tempDir, removeDir } from '../../helpers/dirs.js';
import { deploy } from '../../helpers/deploy.js';

/**
 * POST /ctx {op: 'set', f, g, n, m, store?} writes flow `f`, global `g` and node `n` in `store`
 * (default "file") with callbacks, and `m` in flow context of the default store; it answers once
 * every callback has run. {op: 'get', store?} answers with the values read back.
 */
const FUNC = `
const p = msg.payload;
const store = p.store || 'file';
if (p.op === 'set') {
  let left = 3;
  const done = (err) => {
    if (left < 0) return;
    if (err) { left = -1; msg.payload = { error: err.message }; node.send(msg); return; }
    if (--left === 0) { msg.payload = 'ok'; node.send(msg); }
  };
  flow.set('f', p.f, store, done);
  global.set('g', p.g, store, done);
  context.set('n', p.n, store, done);
  flow.set('m', p.m);
  return;
}
flow.get('f', store, (e1, f) => global.get('g', store, (e2, g) => context.get('n', store, (e3, n) => {
  const errors = [e1, e2, e3].filter(Boolean).map((e) => e.message);
  msg.payload = { f: f ?? null, g: g ?? null, n: n ?? null, m: flow.get('m') ?? null, errors };
  node.send(msg);
})));
`;

const FLOWS = [
  { id: 't1', type: 'tab', label: 'T1' },
  { id: 'in', type: 'http in', z: 't1', url: '/ctx', method: 'post', x: 1, y: 1, wires: [['fn']] },
  { id: 'fn', type: 'function', z: 't1', func: FUNC, outputs: 1, x: 1, y: 1, wires: [['out']] },
  { id: 'out', type: 'http response', z: 't1', x: 1, y: 1, wires: [] },
];

const MEMORY_AND_FILE = { default: { module: 'memory' }, file: { module: 'localfilesystem' } };
const VALUES = { f: { list: [1, 2] }, g: 'global value', n: 42, m: 'memory value' };

async function ctx(url: string, payload: Record<string, unknown>): Promise<unknown> {
  const r = await request(new URL('ctx', url).href, { method: 'POST', json: payload });
  assert.equal(r.status, 200, r.text);
  return r.body ?? r.text;
}

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8'));

describe('contextStorage setting', () => {
  it("keeps Node-RED's shape, resolving a relative dir; none configured is undefined", () => {
    const s = resolveSettings({ contextStorage: { default: 'file', _: { module: 'nothing' }, file: { module: 'localfilesystem', config: { dir: 'ctx', cache: false } } } }, '/base');
    assert.deepEqual(s.contextStorage, { default: 'file', file: { module: 'localfilesystem', config: { dir: path.resolve('/base', 'ctx'), cache: false } } });
    assert.equal(resolveSettings({}).contextStorage, undefined);
    assert.equal(resolveSettings({ contextStorage: {} }).contextStorage, undefined);
  });

  it('rejects a bad configuration with a clear message', () => {
    const cases: [unknown, string][] = [
      ['file', 'contextStorage must be an object of store name → { module, config }'],
      [{ 'my-store': { module: 'memory' } }, "Invalid context store name: 'my-store' (use letters, digits and _)"],
      [{ default: 'disk', file: { module: 'memory' } }, "Default context store unknown: 'disk' (contextStorage.default must name a configured store)"],
      [{ file: { config: {} } }, "Context store 'file' missing 'module' option"],
      [{ file: 'localfilesystem' }, "Context store 'file' missing 'module' option"],
      [{ file: { module: 'redis' } }, 'contextStorage.file.module must be "memory", "localfilesystem", "postgres" or a context store module (require it in a .js settings file), got "redis"'],
      [{ file: { module: 'memory', config: [] } }, 'contextStorage.file.config must be an object'],
      [{ file: { module: 'localfilesystem', config: { cache: 'yes' } } }, 'contextStorage.file.config.cache must be true or false'],
      [{ file: { module: 'localfilesystem', config: { flushInterval: -1 } } }, 'contextStorage.file.config.flushInterval must be a number of seconds (0 or more)'],
      [{ file: { module: 'localfilesystem', config: { dir: '' } } }, 'contextStorage.file.config.dir must be a directory path'],
    ];
    for (const [contextStorage, message] of cases) {
      assert.throws(() => resolveSettings({ contextStorage }), { message }, JSON.stringify(contextStorage));
    }
  });

  it("chooses the default store by Node-RED's rules and lists the stores", () => {
    const stores = (contextStorage?: unknown) => {
      const settings = resolveSettings(contextStorage === undefined ? {} : { contextStorage });
      return new ContextManager({ contextStorage: settings.contextStorage, userDir: '/unused', log: { warn() {} } }).listStores();
    };
    assert.deepEqual(stores(), { default: 'memory', stores: ['memory'] });
    assert.deepEqual(stores({ file: { module: 'localfilesystem' }, mem: { module: 'memory' } }), { default: 'file', stores: ['file', 'mem'] });
    assert.deepEqual(stores({ file: { module: 'localfilesystem' }, default: 'mem', mem: { module: 'memory' } }), { default: 'mem', stores: ['file', 'mem'] });
    assert.deepEqual(stores(MEMORY_AND_FILE), { default: 'default', stores: ['default', 'file'] });
  });

  it('routes each call to the store it names; an unknown name warns once and uses the default', () => {
    const warnings: string[] = [];
    const { contextStorage } = resolveSettings({ contextStorage: { a: { module: 'memory' }, default: 'b', b: { module: 'memory' } } });
    const manager = new ContextManager({ contextStorage, log: { warn: (m) => void warnings.push(m) } });
    const flow = manager.getFlowContext('t1');
    flow.set('k', 'in a', 'a');
    flow.set('#:(b)::k', 'in b');
    assert.equal(flow.get('k'), 'in b', 'unnamed is the default store b');
    assert.equal(flow.get('k', 'a'), 'in a');
    assert.deepEqual(flow.keys('a'), ['k']);
    assert.equal(flow.get('k', 'nosuch'), 'in b');
    flow.set('other', 1, 'nosuch');
    assert.equal(flow.get('#:(default)::k'), 'in b');
    assert.deepEqual(warnings, [
      "Unknown context store 'nosuch' specified. Using default store.",
      "Unknown context store 'default' specified. Using default store.",
    ]);
  });

  it('keeps node context when a node closes once stores are configured, as Node-RED does', () => {
    const { contextStorage } = resolveSettings({ contextStorage: { default: { module: 'memory' } } });
    const manager = new ContextManager({ contextStorage, log: { warn() {} } });
    const node = manager.getNodeContext('n1', 't1');
    node.set('v', 1);
    manager.deleteNodeContext('n1', 't1');
    assert.equal(manager.getNodeContext('n1', 't1'), node);
    assert.equal(node.get('v'), 1);
  });

  it('takes a custom store module (a factory, as a .js settings file gives it) with the user dir in its config', async () => {
    const configs: unknown[] = [];
    const calls: string[] = [];
    const factory = (config: Record<string, unknown>): ContextStore => {
      configs.push(config);
      const inner = new MemoryStore();
      return Object.assign(Object.create(inner) as ContextStore, {
        open: async () => void calls.push('open'),
        close: async () => void calls.push('close'),
      });
    };
    const settings = resolveSettings({ userDir: '/users/me', contextStorage: { redis: { module: factory, config: { host: 'h' } } } });
    const manager = new ContextManager({ contextStorage: settings.contextStorage, userDir: settings.userDir, log: { warn() {} } });
    await manager.open();
    manager.getGlobalContext().set('k', 'v', 'redis');
    assert.equal(manager.getGlobalContext().get('k'), 'v');
    await manager.close();
    assert.deepEqual(configs, [{ host: 'h', settings: { userDir: '/users/me' } }]);
    assert.deepEqual(calls, ['open', 'close']);
    const broken = resolveSettings({ contextStorage: { bad: { module: () => ({ get() {} }) } } });
    assert.throws(() => new ContextManager({ contextStorage: broken.contextStorage, log: { warn() {} } }), {
      message: "Error loading context store 'bad': the store has no open, close, set, keys, delete, clean methods",
    });
  });
});

describe('context stores through a running server', () => {
  it("file store values survive a restart in Node-RED's layout; memory values do not", { timeout: 30_000 }, async () => {
    const settings = { contextStorage: MEMORY_AND_FILE };
    let server: TestServer | undefined = await startServer(settings);
    const userDir = server.userDir;
    try {
      await deploy(server, FLOWS);
      assert.equal(await ctx(server.url, { op: 'set', ...VALUES }), 'ok');
      const listed = await request(server.at('settings'));
      assert.deepEqual(listed.body.context, { default: 'default', stores: ['default', 'file'] });
      await server.stop();

      const dir = path.join(userDir, 'context');
      assert.deepEqual((await readdir(dir)).sort(), ['global', 't1']);
      assert.deepEqual((await readdir(path.join(dir, 't1'))).sort(), ['flow.json', 'fn.json']);
      assert.equal(await readFile(path.join(dir, 't1', 'flow.json'), 'utf8'), '{\n    "f": {\n        "list": [\n            1,\n            2\n        ]\n    }\n}');
      assert.deepEqual(await readJson(path.join(dir, 'global', 'global.json')), { g: 'global value' });
      assert.deepEqual(await readJson(path.join(dir, 't1', 'fn.json')), { n: 42 });

      server = await startServer(settings, userDir);
      assert.deepEqual(await ctx(server.url, { op: 'get' }), { f: { list: [1, 2] }, g: 'global value', n: 42, m: null, errors: [] });
      assert.deepEqual(await ctx(server.url, { op: 'get', store: 'default' }), { f: null, g: null, n: null, m: null, errors: [] });
    } finally {
      await server.dispose();
    }
  });

  it('removes the files of nodes and flows a deploy removes, and warns once for an unknown store', { timeout: 30_000 }, async () => {
    const server = await startServer({ contextStorage: { file: { module: 'localfilesystem', config: { flushInterval: 0 } } } });
    try {
      const tab2 = [{ id: 't2', type: 'tab' }, { id: 'c2', type: 'comment', z: 't2', x: 1, y: 1, wires: [] }];
      await deploy(server, [...FLOWS, ...tab2]);
      assert.equal(await ctx(server.url, { op: 'set', ...VALUES }), 'ok');
      assert.equal(await ctx(server.url, { op: 'set', ...VALUES, store: 'nosuch' }), 'ok');
      const dir = path.join(server.userDir, 'context');
      await eventually(async () => (await readdir(path.join(dir, 't1')).catch(() => [])).filter((n) => n.endsWith('.json')).length === 2);
      const warning = "Unknown context store 'nosuch' specified. Using default store.";
      assert.equal(server.logs.filter((l) => l.includes(warning)).length, 1, server.logs.join('\n'));

      await deploy(server, tab2);
      await eventually(async () => (await readdir(dir)).join() === 'global');
      assert.deepEqual(await readJson(path.join(dir, 'global', 'global.json')), { g: 'global value' });
    } finally {
      await server.dispose();
    }
  });

  it('refuses to start on a context file that is not JSON, naming the file', async () => {
    const userDir = await tempDir();
    try {
      const file = path.join(userDir, 'context', 'global', 'global.json');
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, 'not json');
      await assert.rejects(startServer({ contextStorage: MEMORY_AND_FILE }, userDir), {
        message: `Error loading context store: Invalid JSON in context file '${file}'`,
      });
    } finally {
      await removeDir(userDir);
    }
  });

  it('a bad contextStorage in the settings file stops the start with one clear line', async () => {
    const dir = await tempDir();
    try {
      const file = path.join(dir, 'settings.json');
      await writeFile(file, JSON.stringify({ userDir: path.join(dir, 'user'), contextStorage: { file: { module: 'localfilesytem' } } }));
      const r = await runCli(['start', '--settings', file]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(
        r.stderr.trim(),
        'runnel: invalid settings: contextStorage.file.module must be "memory", "localfilesystem", "postgres" or a context store module (require it in a .js settings file), got "localfilesytem"',
      );
    } finally {
      await removeDir(dir);
    }
  });

  it('with cache: false a SIGKILLed process loses no acknowledged value', { timeout: 60_000 }, async () => {
    const dir = await tempDir();
    const settings = { contextStorage: { default: { module: 'memory' }, file: { module: 'localfilesystem', config: { cache: false } } } };
    try {
      const first = await spawnRunnel(dir, settings);
      await deploy(first, FLOWS);
      assert.equal(await ctx(first.url, { op: 'set', ...VALUES }), 'ok');
      first.child.kill('SIGKILL');
      assert.equal(await first.exited, 'SIGKILL');
      const context = path.join(dir, 'user', 'context');
      assert.deepEqual(await readJson(path.join(context, 't1', 'fn.json')), { n: 42 });

      const second = await spawnRunnel(dir, settings);
      assert.deepEqual(await ctx(second.url, { op: 'get' }), { f: { list: [1, 2] }, g: 'global value', n: 42, m: null, errors: [] });
      assert.equal(await ctx(second.url, { op: 'set', f: 'second', g: 2, n: 3 }), 'ok');
      second.child.kill('SIGKILL');
      await second.exited;
      assert.deepEqual(await readJson(path.join(context, 't1', 'flow.json')), { f: 'second' });
    } finally {
      killRunnels();
      await removeDir(dir);
    }
  });
});
