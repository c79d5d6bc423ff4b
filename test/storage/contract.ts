import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { RunnelError } from '../../src/base/errors.js';
import { revOf } from '../../src/storage/rev.js';
import type { FlowNodeConfig, SessionRecord, Storage } from '../../src/storage/contract.js';

/**
 * The Storage contract: every behaviour of the interface, written once and run against each
 * backend (the file backend in file-storage.test.ts, PostgreSQL in postgres-storage.test.ts).
 * What only one backend does (file layout, backups, migrations) stays in that backend's own tests.
 */

export interface StorageBackend {
  name: string;
  /** A new, empty place to store into (a user dir, a database schema); returns its name. */
  newPlace(): Promise<string>;
  /** A backend on that place, not yet initialised. */
  create(place: string): Storage;
  /** Runs once after every test of the suite. */
  dispose?(): Promise<void>;
}

export const EMPTY_REV = revOf([]);

export const FLOWS_A: FlowNodeConfig[] = [
  { id: 't1', type: 'tab', label: 'One' },
  { id: 'n1', type: 'inject', z: 't1', wires: [['n2']] },
  { id: 'n2', type: 'debug', z: 't1', wires: [] },
];
export const FLOWS_B: FlowNodeConfig[] = [{ id: 't1', type: 'tab', label: 'Two' }];

const SESSION: SessionRecord = {
  tokenHash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  username: 'admin',
  client: 'node-red-admin',
  scope: ['*'],
  expires: 1700000000000,
};

/** A snapshot without `type`, which only backends that record deployment types return. */
async function readFlows(storage: Storage) {
  const { type: _type, ...snapshot } = await storage.getFlows();
  return snapshot;
}

/**
 * For a contract suite (call it inside its describe): opens an initialised backend on a new place,
 * or on a given one to reopen it; after the suite closes every one opened and disposes the backend.
 */
export function opener(backend: StorageBackend): (place?: string) => Promise<{ storage: Storage; place: string }> {
  const opened: Storage[] = [];
  after(async () => {
    for (const s of opened) await s.close().catch(() => undefined);
    await backend.dispose?.();
  });
  return async (place) => {
    const where = place ?? (await backend.newPlace());
    const storage = backend.create(where);
    opened.push(storage);
    await storage.init();
    return { storage, place: where };
  };
}

export function storageContract(backend: StorageBackend): void {
  describe(`Storage contract: ${backend.name}`, { timeout: 60_000 }, () => {
    const open = opener(backend);

    it('reads an empty place as an empty configuration', async () => {
      const { storage } = await open();
      assert.deepEqual(await readFlows(storage), { flows: [], credentials: null, rev: EMPTY_REV });
      assert.deepEqual(await storage.getSessions(), []);
      assert.deepEqual(await storage.getRuntimeConfig(), {});
    });

    it('answers the rev as the SHA-256 of the compact JSON and reads back what was saved', async () => {
      const { storage } = await open();
      const { rev } = await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } } });
      assert.equal(rev, revOf(FLOWS_A));
      assert.deepEqual(await readFlows(storage), { flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } }, rev });
    });

    it('takes the caller\'s serialisation (json) as the stored text and the rev', async () => {
      const { storage } = await open();
      const json = JSON.stringify(FLOWS_B);
      const { rev } = await storage.saveFlows({ flows: FLOWS_B, credentials: null, json });
      assert.equal(rev, revOf(FLOWS_B));
      assert.deepEqual((await readFlows(storage)).flows, FLOWS_B);
    });

    it('saves when expectedRev matches and refuses a stale rev with 409, changing nothing', async () => {
      const { storage } = await open();
      const first = await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: {} }, expectedRev: EMPTY_REV });
      const second = await storage.saveFlows({ flows: FLOWS_B, credentials: { plain: { t1: { k: 'v' } } }, expectedRev: first.rev });
      assert.equal(second.rev, revOf(FLOWS_B));
      await assert.rejects(
        storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { x: {} } }, expectedRev: first.rev }),
        (e: unknown) => {
          assert.ok(e instanceof RunnelError);
          assert.equal(e.code, 'version_mismatch');
          assert.equal(e.status, 409);
          assert.equal(e.message, `The flows have changed since rev ${first.rev} was read`);
          return true;
        },
      );
      assert.deepEqual(await readFlows(storage), { flows: FLOWS_B, credentials: { plain: { t1: { k: 'v' } } }, rev: second.rev });
    });

    it('lets exactly one of two concurrent saves with the same expectedRev win', async () => {
      const { storage } = await open();
      const results = await Promise.allSettled([
        storage.saveFlows({ flows: FLOWS_A, credentials: null, expectedRev: EMPTY_REV }),
        storage.saveFlows({ flows: FLOWS_B, credentials: null, expectedRev: EMPTY_REV }),
      ]);
      assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
      const winner = results.findIndex((r) => r.status === 'fulfilled');
      const loser = results[1 - winner] as PromiseRejectedResult;
      assert.equal(loser.reason.code, 'version_mismatch');
      assert.deepEqual((await readFlows(storage)).flows, [FLOWS_A, FLOWS_B][winner]);
    });

    it('applies many concurrent saves in call order, ending on a matched pair', async () => {
      const { storage } = await open();
      await Promise.all(Array.from({ length: 20 }, (_, i) =>
        storage.saveFlows({ flows: [{ id: `n${i}`, type: 'tab' }], credentials: { plain: { [`n${i}`]: { k: i } } } })));
      const snap = await readFlows(storage);
      assert.deepEqual(snap, { flows: [{ id: 'n19', type: 'tab' }], credentials: { plain: { n19: { k: 19 } } }, rev: revOf([{ id: 'n19', type: 'tab' }]) });
    });

    it('keeps the stored credentials when a save passes credentials: null', async () => {
      const { storage } = await open();
      await storage.saveFlows({ flows: FLOWS_A, credentials: { plain: { n1: { user: 'u' } } } });
      const { rev } = await storage.saveFlows({ flows: FLOWS_B, credentials: null });
      assert.deepEqual(await readFlows(storage), { flows: FLOWS_B, credentials: { plain: { n1: { user: 'u' } } }, rev });
    });

    it('hands out copies: mutating a snapshot or the saved values does not change storage', async () => {
      const { storage } = await open();
      const flows = structuredClone(FLOWS_A);
      const creds = { plain: { n1: { a: 1 } } };
      await storage.saveFlows({ flows, credentials: creds });
      flows[0]!.label = 'changed';
      creds.plain.n1.a = 2;
      const snap = await readFlows(storage);
      snap.flows.pop();
      (snap.credentials as { plain: Record<string, unknown> }).plain.n1 = {};
      const config = { nested: { a: 1 } };
      await storage.saveRuntimeConfig(config);
      config.nested.a = 2;
      (await storage.getRuntimeConfig()).extra = true;
      assert.deepEqual(await readFlows(storage), { flows: FLOWS_A, credentials: { plain: { n1: { a: 1 } } }, rev: revOf(FLOWS_A) });
      assert.deepEqual(await storage.getRuntimeConfig(), { nested: { a: 1 } });
    });

    it('keeps flows, credentials, sessions and the runtime config across a reopen, unknown keys included', async () => {
      const { storage, place } = await open();
      const { rev } = await storage.saveFlows({ flows: FLOWS_A, credentials: { $: 'opaque' } });
      await storage.saveSessions([SESSION]);
      await storage.saveRuntimeConfig({ _credentialSecret: 'abc', instanceId: 'i1', telemetry: { on: false } });
      await storage.close();
      const { storage: again } = await open(place);
      assert.deepEqual(await readFlows(again), { flows: FLOWS_A, credentials: { $: 'opaque' }, rev });
      assert.deepEqual(await again.getSessions(), [SESSION]);
      assert.deepEqual(await again.getRuntimeConfig(), { _credentialSecret: 'abc', instanceId: 'i1', telemetry: { on: false } });
    });

    it('replaces the whole session list and the whole runtime config on save', async () => {
      const { storage } = await open();
      const other = { ...SESSION, tokenHash: 'a'.repeat(64), username: 'reader', scope: ['read'] };
      await storage.saveSessions([SESSION, other]);
      await storage.saveSessions([other]);
      assert.deepEqual(await storage.getSessions(), [other]);
      await storage.saveSessions([]);
      assert.deepEqual(await storage.getSessions(), []);
      await storage.saveRuntimeConfig({ a: 1, b: 2 });
      await storage.saveRuntimeConfig({ b: 3 });
      assert.deepEqual(await storage.getRuntimeConfig(), { b: 3 });
    });

    it('updates the runtime config as one read-modify-write step, losing no concurrent change', async () => {
      const { storage } = await open();
      await storage.saveRuntimeConfig({ keep: true, count: 0 });
      const results = await Promise.all(Array.from({ length: 10 }, () =>
        storage.updateRuntimeConfig((c) => ({ ...c, count: (c.count as number) + 1 }))));
      assert.deepEqual(results.map((r) => r.count).sort((a, b) => (a as number) - (b as number)), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.deepEqual(await storage.getRuntimeConfig(), { keep: true, count: 10 });
    });

    it('keeps each user\'s editor settings apart', async () => {
      const { storage } = await open();
      assert.deepEqual(await storage.getUserSettings('admin'), {});
      await storage.saveUserSettings('admin', { view: { grid: true } });
      await storage.saveUserSettings('bob', { theme: 'dark' });
      await storage.saveUserSettings('admin', { view: { grid: false } });
      assert.deepEqual(await storage.getUserSettings('admin'), { view: { grid: false } });
      assert.deepEqual(await storage.getUserSettings('bob'), { theme: 'dark' });
    });

    it('keeps library entries: text by path, folders listed as sub-folders then files with their meta', async () => {
      const { storage } = await open();
      assert.deepEqual(await storage.getLibraryEntry('functions', ''), []);
      await storage.saveLibraryEntry('functions', 'util/trim.js', { name: 'trim', outputs: 1 }, 'return msg;');
      await storage.saveLibraryEntry('functions', 'top.js', { name: 'top' }, 'return null;');
      await storage.saveLibraryEntry('flows', 'a/b.json', { ignored: 1 }, '[{"id":"x"}]');
      assert.equal(await storage.getLibraryEntry('functions', 'util/trim.js'), 'return msg;');
      assert.deepEqual(await storage.getLibraryEntry('functions', ''), ['util', { name: 'top', fn: 'top.js' }]);
      assert.deepEqual(await storage.getLibraryEntry('functions', 'util'), [{ name: 'trim', outputs: '1', fn: 'trim.js' }]);
      assert.equal(await storage.getLibraryEntry('flows', 'a/b.json'), '[{"id":"x"}]');
      assert.deepEqual(await storage.getLibraryEntry('flows', 'a'), [{ fn: 'b.json' }]);
      await assert.rejects(storage.getLibraryEntry('functions', 'nope.js'), { code: 'not_found' });
      await assert.rejects(storage.saveLibraryEntry('functions', 'dir/', {}, ''), { code: 'invalid_request' });
      await assert.rejects(async () => storage.getLibraryEntry('../x', 'a'), { code: 'invalid_request' });
    });

    it('counts login failures by key within a window, and forgives and prunes them', async () => {
      const { storage } = await open();
      const f = storage.loginFailures;
      assert.deepEqual(await f.recent(['k'], 0), {});
      const below = (n: number) => (times: Record<string, number[]>) => (times.k?.length ?? 0) < n;
      assert.deepEqual(await f.countIf(['k', 'j'], 0, 100, below(2)), { recorded: true, times: {} });
      assert.deepEqual(await f.countIf(['k', 'j'], 0, 200, below(2)), { recorded: true, times: { k: [100], j: [100] } });
      assert.deepEqual(await f.countIf(['k', 'j'], 0, 300, below(2)), { recorded: false, times: { k: [100, 200], j: [100, 200] } });
      assert.deepEqual(await f.recent(['k', 'j', 'x'], 150), { k: [200], j: [200] }, 'only failures after `since`');
      await f.forgive(['k'], ['j']);
      assert.deepEqual(await f.recent(['k', 'j'], 0), { k: [100] });
      await f.countIf(['k'], 0, 400, () => true);
      await f.prune(100);
      assert.deepEqual(await f.recent(['k'], 0), { k: [400] });
    });

    it('lets exactly the admitted number of concurrent login attempts count', async () => {
      const { storage } = await open();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        storage.loginFailures.countIf(['p', 'a'], 0, 1000 + i, (t) => (t.p?.length ?? 0) < 5)));
      assert.equal(results.filter((r) => r.recorded).length, 5);
      assert.equal((await storage.loginFailures.recent(['a'], 0)).a?.length, 5);
    });

    it('keeps two places apart', async () => {
      const { storage: one } = await open();
      const { storage: two } = await open();
      await one.saveFlows({ flows: FLOWS_A, credentials: null });
      await one.saveRuntimeConfig({ who: 'one' });
      assert.deepEqual(await readFlows(two), { flows: [], credentials: null, rev: EMPTY_REV });
      assert.deepEqual(await two.getRuntimeConfig(), {});
    });

    it('close() waits for queued writes and refuses use afterwards', async () => {
      const { storage, place } = await open();
      const pending = storage.saveFlows({ flows: FLOWS_B, credentials: null });
      await storage.close();
      await pending;
      await assert.rejects(async () => storage.getFlows(), /storage is closed/);
      const { storage: again } = await open(place);
      assert.deepEqual((await readFlows(again)).flows, FLOWS_B);
    });
  });
}
