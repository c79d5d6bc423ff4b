import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContextManager } from '../../../src/runtime/context/context.js';
import { PostgresStore } from '../../../src/runtime/context/postgres-store.js';
import { primaryOnlyScopes } from '../../../src/runtime/config/primary-only.js';
import type { ContextEntry, SharedContext } from '../../../src/storage/contract.js';
import { LeaseLostError } from '../../../src/storage/lease-lost.js';
import { eventually } from '../../helpers/server.js';

/**
 * The context of primary-only tabs under a lost lease, against a database stand-in that refuses
 * primary-only writes as PostgreSQL does once another instance holds the lease.
 */

function database() {
  const rows = new Map<string, string>();
  const writes: Array<{ scope: string; key: string; value: string | undefined; primaryOnly: boolean }> = [];
  let deposed = false;
  const at = (scope: string, key: string) => `${scope}\u0000${key}`;
  const context: SharedContext = {
    load: async () => [],
    read: async (scope, keys) => {
      const out: ContextEntry[] = [];
      for (const [k, value] of rows) {
        const [s, key] = k.split('\u0000') as [string, string];
        if (s === scope && (keys === null || keys.includes(key))) out.push({ scope, key, value });
      }
      return out;
    },
    write: async (changes, primaryOnly = false) => {
      if (primaryOnly && deposed) throw new LeaseLostError('the lease has passed to another instance');
      for (const c of changes) {
        writes.push({ ...c, primaryOnly });
        if (c.value === undefined) rows.delete(at(c.scope, c.key));
        else rows.set(at(c.scope, c.key), c.value);
      }
    },
    deleteScope: async () => undefined,
    clean: async () => undefined,
  };
  return { context, rows, writes, at, depose: () => void (deposed = true) };
}

const flows = [
  { id: 'sched', type: 'tab', env: [{ name: 'RUNNEL_PRIMARY_ONLY', value: 'true' }] },
  { id: 'tick', type: 'inject', z: 'sched' },
  { id: 'web', type: 'tab' },
  { id: 'in', type: 'http in', z: 'web' },
];

describe('postgres context store: primary-only tabs', () => {
  it('counts a primary-only tab\'s flow scope and its nodes\' scopes as primary-only, and nothing else', () => {
    const primaryOnly = primaryOnlyScopes(() => flows);
    assert.ok(primaryOnly('sched'));
    assert.ok(primaryOnly('tick:sched'));
    assert.ok(!primaryOnly('web'));
    assert.ok(!primaryOnly('in:web'));
    assert.ok(!primaryOnly('global'));
  });

  it('drops a primary-only write the database refuses for a lost lease, without retrying it, and reads the stored value back; other scopes are written', async () => {
    const db = database();
    const warnings: string[] = [];
    const store = new PostgresStore(
      { context: db.context, onChange: () => () => undefined, primaryOnly: primaryOnlyScopes(() => flows) },
      { warn: (m) => void warnings.push(m), error: (m) => void warnings.push(m) },
    );
    await store.open();
    const done = (scope: string, key: string, value: unknown) => new Promise<Error | undefined>((resolve) => store.set(scope, key, value, (err) => resolve(err ?? undefined)));
    assert.equal(await done('sched', 'lastRun', 1), undefined);
    assert.deepEqual(db.writes.at(-1), { scope: 'sched', key: 'lastRun', value: '1', primaryOnly: true });

    db.depose();
    const [fenced, plain] = await Promise.all([done('sched', 'lastRun', 2), done('web', 'hits', 5)]);
    assert.ok(fenced instanceof LeaseLostError, String(fenced));
    assert.equal(plain, undefined, 'a write of another scope made in the same tick is not held back');
    assert.equal(db.rows.get(db.at('sched', 'lastRun')), '1');
    assert.equal(db.rows.get(db.at('web', 'hits')), '5');
    await eventually(() => store.get('sched', 'lastRun') === 1, 2000, 10);
    assert.match(warnings.join('\n'), /primary-only tab not written/);

    // The next write sends only its own keys: the refused value is not sent again.
    const sent = db.writes.length;
    assert.equal(await done('web', 'hits', 6), undefined);
    assert.deepEqual(db.writes.slice(sent).map((w) => `${w.scope}.${w.key}`), ['web.hits']);
  });

  it('fences what a node on a primary-only tab sets in global context: refused for a lost lease and read back, while other nodes\' global writes go through', async () => {
    const db = database();
    const manager = new ContextManager({
      contextStorage: { default: { module: 'postgres' } },
      shared: { context: db.context, onChange: () => () => undefined, primaryOnly: primaryOnlyScopes(() => flows) },
      log: { warn: () => undefined },
    });
    await manager.open();
    const scheduler = manager.getNodeContext('tick', 'sched').global;
    const web = manager.getNodeContext('in', 'web').global;
    const set = (scope: typeof web, key: string, value: unknown) => new Promise<Error | undefined>((resolve) => scope.set(key, value, (err) => resolve(err ?? undefined)));
    const lastWrite = () => { const w = db.writes.at(-1)!; return `${w.scope}.${w.key}=${w.value} ${w.primaryOnly ? 'fenced' : 'open'}`; };
    assert.equal(await set(scheduler, 'lastRun', 1), undefined);
    assert.equal(lastWrite(), 'global.lastRun=1 fenced');
    assert.equal(await set(web, 'hits', 1), undefined);
    assert.equal(lastWrite(), 'global.hits=1 open');
    assert.equal(await set(manager.getGlobalContext(), 'admin', 1), undefined);
    assert.equal(lastWrite(), 'global.admin=1 open');
    // The last writer of a key decides its batch: one write of it, not one per writer.
    const sent = db.writes.length;
    scheduler.set('shared', 1);
    await set(web, 'shared', 2);
    assert.deepEqual(db.writes.slice(sent).map((w) => `${w.key}=${w.value} ${w.primaryOnly ? 'fenced' : 'open'}`), ['shared=2 open']);

    db.depose();
    const [fenced, plain] = await Promise.all([set(scheduler, 'lastRun', 2), set(web, 'hits', 2)]);
    assert.ok(fenced instanceof LeaseLostError, String(fenced));
    assert.equal(plain, undefined);
    assert.equal(db.rows.get(db.at('global', 'lastRun')), '1');
    assert.equal(db.rows.get(db.at('global', 'hits')), '2');
    await eventually(() => web.get('lastRun') === 1, 2000, 10);
    await manager.close();
  });
});
