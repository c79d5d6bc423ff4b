import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ContextManager } from '../../../src/runtime/context/context.js';

function setup(functionGlobalContext?: Record<string, unknown>) {
  const warnings: string[] = [];
  const manager = new ContextManager({ functionGlobalContext, log: { warn: (m: string) => void warnings.push(m) } });
  return { manager, warnings };
}

/** Collects the arguments a context callback receives. */
function collect(): { args: unknown[][]; cb: (...a: unknown[]) => void } {
  const args: unknown[][] = [];
  return { args, cb: (...a: unknown[]) => void args.push(a) };
}

describe('node context', () => {
  it('is the same object on every call and keeps ad-hoc properties', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    ctx.queue = [1, 2];
    assert.equal(manager.getNodeContext('n1', 'f1'), ctx);
    assert.deepEqual(manager.getNodeContext('n1', 'f1').queue, [1, 2]);
    assert.deepEqual(Object.keys(ctx), ['queue'], 'get/set/keys/flow/global are not enumerable');
  });

  it('methods work whatever `this` is', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    const stranger = { id: 'other' };
    ctx.set.apply(stranger, ['count', 3]);
    assert.equal(ctx.get.call(stranger, 'count'), 3);
    const { get, keys } = ctx;
    assert.equal(get('count'), 3);
    assert.deepEqual(keys(), ['count']);
    const flowSet = ctx.flow!.set;
    flowSet('x', 1);
    assert.equal(ctx.flow!.get.call(null, 'x'), 1);
  });

  it('reads and writes nested paths, creating parents and deleting on undefined', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    ctx.set('a.b[1].c', 'v');
    assert.deepEqual(ctx.get('a'), { b: [, { c: 'v' }] });
    assert.equal(ctx.get('a.b[1].c'), 'v');
    assert.equal(ctx.get('missing.deep.path'), undefined, 'a missing parent reads as undefined in context');
    ctx.set('a', undefined);
    assert.deepEqual(ctx.keys(), []);
  });

  it('keeps values by reference', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    const value = { n: 1 };
    ctx.set('v', value);
    assert.equal(ctx.get('v'), value);
  });

  it('spreads multi-key results into the callback, one argument per key', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    ctx.set(['a', 'b', 'c'], [1, 2]);
    assert.deepEqual(ctx.get(['a', 'b', 'c']), [1, 2, null], 'a missing value in a multi-set is stored as null');
    const { args, cb } = collect();
    ctx.get(['a', 'b', 'zz'], 'default', cb);
    assert.deepEqual(args, [[undefined, 1, 2, undefined]]);
  });

  it('accepts the callback in place of the store, and reports set and keys completion', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    const set = collect();
    ctx.set('k', 'v', set.cb);
    assert.deepEqual(set.args, [[undefined]]);
    const get = collect();
    ctx.get('k', get.cb);
    assert.deepEqual(get.args, [[undefined, 'v']]);
    const keys = collect();
    ctx.keys(keys.cb);
    assert.deepEqual(keys.args, [[null, ['k']]]);
    assert.throws(() => ctx.get('k', 'memory', 'nope' as never), { message: 'Callback must be a function' });
  });

  it('rejects non-string and empty keys', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    for (const key of ['', 5, null, undefined, ['ok', '']] as never[]) {
      assert.throws(() => ctx.get(key), { message: 'Invalid context key' });
      assert.throws(() => ctx.set(key, 1), { message: 'Invalid context key' });
    }
    const { args, cb } = collect();
    ctx.get('', undefined, cb);
    assert.equal(args.length, 1);
    assert.equal((args[0][0] as Error).message, 'Invalid context key');
    ctx.set('a', 1);
    assert.throws(() => ctx.get('a..b'), { code: 'INVALID_EXPR' });
    const bad = collect();
    ctx.get('a..b', bad.cb);
    assert.equal((bad.args[0][0] as Error & { code?: string }).code, 'INVALID_EXPR');
  });

  it('is deleted when the node closes', () => {
    const { manager } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    ctx.set('x', 1);
    manager.deleteNodeContext('n1', 'f1');
    const fresh = manager.getNodeContext('n1', 'f1');
    assert.notEqual(fresh, ctx);
    assert.equal(fresh.get('x'), undefined);
  });

  it('has no flow context outside a flow, but still reaches global', () => {
    const { manager } = setup({ g: 1 });
    const ctx = manager.getNodeContext('config1', undefined);
    assert.equal(ctx.flow, undefined);
    assert.equal(ctx.global.get('g'), 1);
  });
});

describe('store names', () => {
  it('unnamed, "" and the memory store are the default without a warning', () => {
    const { manager, warnings } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    ctx.set('a', 1, '');
    ctx.set('b', 2, 'memory');
    assert.deepEqual(ctx.get(['a', 'b'], undefined), [1, 2]);
    assert.deepEqual(warnings, []);
  });

  it('"default" and unknown stores fall back to the default store and warn once per name', () => {
    const { manager, warnings } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    ctx.set('a', 1, 'default');
    assert.equal(ctx.get('a', 'default'), 1);
    assert.equal(ctx.flow!.get('a', 'default'), undefined);
    assert.equal(ctx.get('a', 'file'), 1);
    assert.equal(ctx.get('#:(file)::a'), 1);
    ctx.keys('file');
    assert.deepEqual(warnings, [
      "Unknown context store 'default' specified. Using default store.",
      "Unknown context store 'file' specified. Using default store.",
    ]);
  });

  it('an explicit store argument wins over a #:(store):: prefix', () => {
    const { manager, warnings } = setup();
    const ctx = manager.getNodeContext('n1', 'f1');
    ctx.set('#:(memory)::x', 5, 'disk');
    assert.equal(ctx.get('x'), 5);
    assert.deepEqual(warnings, ["Unknown context store 'disk' specified. Using default store."]);
  });
});

describe('flow and global context', () => {
  it('nodes of one flow share its flow context; other flows do not see it', () => {
    const { manager } = setup();
    manager.getNodeContext('n1', 'f1').flow!.set('shared', 'yes');
    assert.equal(manager.getNodeContext('n2', 'f1').flow!.get('shared'), 'yes');
    assert.equal(manager.getFlowContext('f1').get('shared'), 'yes');
    assert.equal(manager.getNodeContext('n3', 'f2').flow!.get('shared'), undefined);
  });

  it('$parent. reaches the parent flow from a subflow, and nothing above a tab', () => {
    const { manager } = setup();
    const tab = manager.getFlowContext('tab');
    const sub = manager.getFlowContext('sub1', 'tab');
    const nested = manager.getFlowContext('sub2', 'sub1');
    tab.set('x', 'tab x');
    assert.equal(sub.get('$parent.x'), 'tab x');
    assert.equal(nested.get('$parent.$parent.x'), 'tab x');
    sub.set('$parent.y', 'from sub');
    assert.equal(tab.get('y'), 'from sub');
    assert.equal(sub.get('y'), undefined);
    assert.equal(tab.get('$parent.x'), undefined);
    tab.set('$parent.z', 1);
    assert.deepEqual(tab.keys(), ['x', 'y']);
    assert.equal(sub.get('$parent'), undefined);
    const { args, cb } = collect();
    tab.get('$parent.x', cb);
    assert.deepEqual(args, [[]], 'the root context above a tab answers with no arguments');
    assert.equal(sub.get('$parentish'), undefined);
    sub.set('$parentish', 2);
    assert.equal(sub.get('$parentish'), 2);
  });

  it('global is shared, falls back to functionGlobalContext by reference and lists its keys', () => {
    const lib = { version: 1 };
    const seed = { lib, name: 'seeded' };
    const { manager } = setup(seed);
    const g1 = manager.getNodeContext('n1', 'f1').global;
    const g2 = manager.getNodeContext('n2', 'f2').global;
    // One view per node (it names the node as the writer, for the postgres store), one set of values.
    assert.equal(g1, manager.getNodeContext('n1', 'f1').global);
    assert.equal(g1.get('lib'), lib);
    assert.equal(g1.get('lib.version'), 1);
    g1.set('name', 'overridden');
    assert.equal(g2.get('name'), 'overridden');
    assert.equal(manager.getGlobalContext().get('name'), 'overridden');
    assert.equal(seed.name, 'seeded', 'the settings object is not written');
    g1.set('extra', true);
    assert.deepEqual(g1.keys(), ['lib', 'name', 'extra']);
    const { args, cb } = collect();
    g1.get(['lib', 'extra', 'none'], cb);
    assert.deepEqual(args, [[undefined, lib, true, undefined]]);
  });

  it('clean drops contexts of removed nodes and flows but keeps global', () => {
    const { manager } = setup();
    const keep = manager.getNodeContext('n1', 'f1');
    keep.set('v', 1);
    keep.flow!.set('v', 2);
    const gone = manager.getNodeContext('n2', 'f2');
    gone.set('v', 3);
    gone.flow!.set('v', 4);
    keep.global.set('v', 5);
    // Not awaited: the in-memory part is done on return, which is what this checks.
    void manager.clean(new Set(['n1', 'f1']));
    assert.equal(manager.getNodeContext('n1', 'f1'), keep);
    assert.equal(keep.get('v'), 1);
    assert.equal(keep.flow!.get('v'), 2);
    const again = manager.getNodeContext('n2', 'f2');
    assert.notEqual(again, gone);
    assert.equal(again.get('v'), undefined);
    assert.equal(again.flow!.get('v'), undefined);
    assert.equal(again.global.get('v'), 5);
  });

  it('close empties every scope', async () => {
    const { manager } = setup();
    manager.getNodeContext('n1', 'f1').set('v', 1);
    await manager.close();
    assert.equal(manager.getNodeContext('n1', 'f1').get('v'), undefined);
  });
});
