import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FileStore, type FileStoreConfig } from '../../../src/runtime/context/file-store.js';
import { stringifyContext } from '../../../src/runtime/context/context-json.js';
import type { ContextCallback } from '../../../src/runtime/util/types.js';
import { eventually } from '../../helpers/server.js';
import { tempDir, removeDir } from '../../helpers/dirs.js';

let root: string;
before(async () => {
  root = await tempDir('runnel-ctxfile-');
});
after(() => removeDir(root));

let count = 0;
/** A store over a fresh user dir, and the messages it logged. */
async function freshStore(config: FileStoreConfig = {}) {
  const userDir = path.join(root, `u${count++}`);
  await mkdir(userDir);
  const logs: string[] = [];
  const log = { warn: (m: string) => void logs.push(`warn: ${m}`), error: (m: string) => void logs.push(`error: ${m}`) };
  const make = (c: FileStoreConfig = config) => new FileStore({ ...c, settings: { userDir } }, log);
  const store = make();
  await store.open();
  return { store, make, userDir, logs, ctx: path.join(userDir, 'context') };
}

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8'));

/** Calls a callback-style store method and resolves with the callback's arguments. */
function call(fn: (cb: ContextCallback) => void): Promise<unknown[]> {
  return new Promise((resolve) => fn((...args) => resolve(args)));
}

describe('localfilesystem store, cached (the default)', () => {
  it("writes Node-RED's layout and four-space JSON on close, and loads it back on open", async () => {
    const { store, make, ctx } = await freshStore();
    store.set('global', 'count', 3);
    store.set('t1', 'user', { name: 'ann', tags: ['a'] });
    store.set('n1:t1', ['a', 'b'], [1]);
    store.set('cfg', 'x', true);
    assert.equal(store.get('global', 'count'), 3, 'cached values read synchronously');
    assert.deepEqual((await readdir(ctx)).sort(), [], 'nothing is written before the flush interval');
    await store.close();
    assert.deepEqual((await readdir(ctx)).sort(), ['cfg', 'global', 't1']);
    assert.deepEqual((await readdir(path.join(ctx, 't1'))).sort(), ['flow.json', 'n1.json']);
    assert.equal(await readFile(path.join(ctx, 'global', 'global.json'), 'utf8'), '{\n    "count": 3\n}');
    assert.equal(
      await readFile(path.join(ctx, 't1', 'flow.json'), 'utf8'),
      '{\n    "user": {\n        "name": "ann",\n        "tags": [\n            "a"\n        ]\n    }\n}',
    );
    assert.deepEqual(await readJson(path.join(ctx, 't1', 'n1.json')), { a: 1, b: null });
    assert.deepEqual(await readJson(path.join(ctx, 'cfg', 'flow.json')), { x: true }, 'a scope without a flow is a flow-style file');

    const reopened = make();
    await reopened.open();
    assert.equal(reopened.get('global', 'count'), 3);
    assert.deepEqual(reopened.get('t1', 'user.tags'), ['a']);
    assert.deepEqual(reopened.get('n1:t1', ['a', 'b']), [1, null]);
    assert.deepEqual(reopened.keys('cfg'), ['x']);
    await reopened.close();
  });

  it('flushes changed scopes after flushInterval seconds', async () => {
    const { store, ctx } = await freshStore({ flushInterval: 0 });
    store.set('global', 'a', 1);
    const file = path.join(ctx, 'global', 'global.json');
    await eventually(async () => (await readJson(file).catch(() => undefined))?.a === 1);
    store.set('global', 'a', undefined);
    await eventually(async () => (await readFile(file, 'utf8')) === '{}');
    await store.close();
  });

  it('persists plain JSON: Buffers, Dates and undefined come back as JSON made them', async () => {
    const { store, make } = await freshStore();
    store.set('global', 'buf', Buffer.from('hi'));
    store.set('global', 'when', new Date(Date.UTC(2024, 0, 2)));
    store.set('global', 'obj', { keep: 1, drop: undefined });
    await store.close();
    const reopened = make();
    await reopened.open();
    assert.deepEqual(reopened.get('global', ['buf', 'when', 'obj']), [{ type: 'Buffer', data: [104, 105] }, '2024-01-02T00:00:00.000Z', { keep: 1 }]);
  });

  it('writes a circular reference as "[Circular ~…]" and warns once per scope', async () => {
    const { store, ctx, logs } = await freshStore({ flushInterval: 0 });
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    store.set('t1', 'loop', loop);
    const file = path.join(ctx, 't1', 'flow.json');
    await eventually(async () => (await readJson(file).catch(() => undefined))?.loop);
    store.set('t1', 'other', 1);
    await eventually(async () => (await readJson(file)).other === 1);
    await store.close();
    assert.deepEqual(await readJson(file), { loop: { name: 'loop', self: '[Circular ~.loop]' }, other: 1 });
    assert.deepEqual(logs, ['warn: Context t1 contains a circular reference that cannot be persisted']);
  });

  it('refuses a file that is not a JSON object, naming it', async () => {
    const { make, ctx } = await freshStore();
    await mkdir(path.join(ctx, 't1'), { recursive: true });
    const file = path.join(ctx, 't1', 'flow.json');
    await writeFile(file, '{"half": ');
    await assert.rejects(make().open(), { message: `Invalid JSON in context file '${file}'` });
  });

  it('ignores and removes the temp files of a write a crash interrupted', async () => {
    const { make, ctx } = await freshStore();
    await mkdir(path.join(ctx, 'global'), { recursive: true });
    await writeFile(path.join(ctx, 'global', 'global.json'), '{"kept": 1}');
    await writeFile(path.join(ctx, 'global', '.global.json.0123456789ab.runnel-tmp'), '{"kept": 2, "torn');
    const store = make();
    await store.open();
    assert.equal(store.get('global', 'kept'), 1);
    assert.deepEqual(await readdir(path.join(ctx, 'global')), ['global.json']);
  });

  it('honours config.dir and config.base', async () => {
    const dir = path.join(root, 'elsewhere');
    const { store, userDir } = await freshStore({ dir, base: 'ctx' });
    store.set('global', 'v', 'x');
    await store.close();
    assert.deepEqual(await readJson(path.join(dir, 'ctx', 'global', 'global.json')), { v: 'x' });
    assert.deepEqual(await readdir(userDir), []);
  });

  it('clean removes the files of removed nodes and the directories of removed flows, never global', async () => {
    const { store, make, ctx } = await freshStore();
    for (const scope of ['global', 't1', 'n1:t1', 'n2:t1', 't2', 'n3:t2']) store.set(scope, 'v', scope);
    await store.close();
    const reopened = make();
    await reopened.open();
    await reopened.clean(['t1', 'n1']);
    assert.deepEqual((await readdir(ctx)).sort(), ['global', 't1']);
    assert.deepEqual((await readdir(path.join(ctx, 't1'))).sort(), ['flow.json', 'n1.json']);
    assert.equal(reopened.get('n2:t1', 'v'), undefined);
    assert.equal(reopened.get('n1:t1', 'v'), 'n1:t1');
    await reopened.delete('n1:t1');
    assert.deepEqual(await readdir(path.join(ctx, 't1')), ['flow.json']);
    await reopened.close();
    assert.deepEqual(await readdir(path.join(ctx, 't1')), ['flow.json'], 'a deleted scope is not written back on close');
  });

  it('refuses scope ids that would leave the context directory', async () => {
    const { store } = await freshStore();
    assert.throws(() => store.set('../escape', 'v', 1), { message: "Context scope '../escape' cannot be stored in a file" });
    const [err] = await call((cb) => store.set('n/1:t1', 'v', 1, cb));
    assert.equal((err as Error).message, "Context scope 'n/1:t1' cannot be stored in a file");
    await store.close();
  });
});

describe('localfilesystem store, cache: false', () => {
  it("refuses synchronous access with Node-RED's errors", async () => {
    const { store } = await freshStore({ cache: false });
    assert.throws(() => store.get('global', 'a'), { message: 'File Store cache disabled - only asynchronous access supported' });
    assert.throws(() => store.keys('global'), { message: 'Callback must be a function' });
    await store.close();
  });

  it('writes every set to its file before the callback, and reads the file on every get', async () => {
    const { store, ctx } = await freshStore({ cache: false });
    assert.deepEqual(await call((cb) => store.set('n1:t1', 'a.b', 1, cb)), [null]);
    const file = path.join(ctx, 't1', 'n1.json');
    assert.equal(await readFile(file, 'utf8'), '{\n    "a": {\n        "b": 1\n    }\n}');
    await writeFile(file, JSON.stringify({ a: { b: 2 }, c: 'edited' }));
    assert.deepEqual(await call((cb) => store.get('n1:t1', 'a.b', cb)), [null, 2]);
    assert.deepEqual(await call((cb) => store.get('n1:t1', ['c', 'zz'], cb)), [null, 'edited', undefined]);
    assert.deepEqual(await call((cb) => store.get('t9', ['x', 'y'], cb)), [null, undefined, undefined], 'no file: every key is undefined');
    assert.deepEqual(await call((cb) => store.keys('n1:t1', cb)), [null, ['a', 'c']]);
    assert.deepEqual(await call((cb) => store.set('n1:t1', ['c', 'd'], ['x'], cb)), [null]);
    assert.deepEqual(await readJson(file), { a: { b: 2 }, c: 'x', d: null });
    const [err] = await call((cb) => store.get('n1:t1', 'a..b', cb));
    assert.equal((err as Error & { code?: string }).code, 'INVALID_EXPR');
    store.set('global', 'late', 'v');
    await store.close();
    assert.deepEqual(await readJson(path.join(ctx, 'global', 'global.json')), { late: 'v' }, 'close waits for writes without a callback');
  });
});

describe('context JSON', () => {
  it("marks references back to an enclosing object as json-stringify-safe does", () => {
    const a: Record<string, unknown> = { n: 1 };
    const b: Record<string, unknown> = { a };
    a.inner = { back: a, top: undefined };
    const root = { a, b, list: [a] };
    (root as Record<string, unknown>).me = root;
    const { json, circular } = stringifyContext(root);
    assert.equal(circular, true);
    assert.deepEqual(JSON.parse(json), {
      a: { n: 1, inner: { back: '[Circular ~.a]' } },
      b: { a: { n: 1, inner: { back: '[Circular ~.b.a]' } } },
      list: [{ n: 1, inner: { back: '[Circular ~.list.0]' } }],
      me: '[Circular ~]',
    });
    assert.deepEqual(stringifyContext({ shared: [a.n, a.n] }), { json: '{\n    "shared": [\n        1,\n        1\n    ]\n}', circular: false });
  });
});
