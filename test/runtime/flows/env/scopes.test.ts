import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../../../helpers/server.js';
import { flowSuite, type Conf } from '../../../nodes/flow.js';
import { deploy } from '../../../helpers/deploy.js';

const at = { x: 100, y: 100 };

/** A function node reporting the env names it is given, as `env.get` in user code sees them. */
const reporter = (id: string, z: string, names: string[], extra: Conf = {}): Conf => ({
  id, type: 'function', z, name: id, ...at, outputs: 1, wires: [['out']], ...extra,
  func: `msg.payload = {}; for (const n of ${JSON.stringify(names)}) msg.payload[n] = env.get(n); return msg;`,
});
const out = (z = 't1'): Conf => ({ id: z === 't1' ? 'out' : `out-${z}`, type: 'test-capture', z, name: 'out', ...at, wires: [] });

function flows(globalA = 'ga'): Conf[] {
  return [
    {
      id: 'gc', type: 'global-config', env: [
        { name: 'GLOBAL_A', value: globalA, type: 'str' },
        { name: 'GLOBAL_J', value: '"j-" & $env("GLOBAL_A")', type: 'jsonata' },
        { name: 'GLOBAL_SECRET', value: '', type: 'cred' },
      ],
      credentials: { map: { GLOBAL_SECRET: 's3cret' } },
    },
    {
      id: 't1', type: 'tab', label: 'main', env: [
        { name: 'BASE', value: '10', type: 'num' },
        { name: 'DOUBLE', value: '$env("BASE") * 2', type: 'jsonata' },
        { name: 'AFTER', value: 'DOUBLE', type: 'env' },
        { name: 'FROM_GLOBAL', value: 'GLOBAL_A', type: 'env' },
        { name: 'BROKEN', value: '$env(', type: 'jsonata' },
        { name: 'TAB_PW', value: '', type: 'cred' },
        { name: 'OBJ', value: '{"a":1}', type: 'json' },
        { name: 'SHADOWED', value: 'tab', type: 'str' },
      ],
      credentials: { TAB_PW: 'pw1' },
    },
    out(),
    reporter('tab-reader', 't1', ['BASE', 'DOUBLE', 'AFTER', 'FROM_GLOBAL', 'BROKEN', 'TAB_PW', 'GLOBAL_A', 'GLOBAL_J', 'GLOBAL_SECRET', 'SHADOWED', 'G', 'NR_NODE_PATH', 'NR_GROUP_NAME']),
    // The whole-value property is substituted when the node is built: after the JSONata value is ready.
    { id: 'subst', type: 'change', z: 't1', name: 'subst', ...at, wires: [['out']], rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '${DOUBLE}', tot: 'str' }] },
    { id: 'mutator', type: 'function', z: 't1', name: 'mutator', ...at, outputs: 1, wires: [['out']], func: 'const o = env.get("OBJ"); o.a = 2; msg.payload = env.get("OBJ"); return msg;' },

    { id: 'g1', type: 'group', z: 't1', name: 'outer group', nodes: ['g2'], env: [{ name: 'G', value: 'grp', type: 'str' }, { name: 'SHADOWED', value: 'group', type: 'str' }] },
    { id: 'g2', type: 'group', z: 't1', g: 'g1', name: 'inner group', nodes: ['group-reader'], env: [{ name: 'H', value: '$env("G") & "-inner:" & $env("BASE")', type: 'jsonata' }] },
    reporter('group-reader', 't1', ['G', 'H', 'SHADOWED', 'BASE', 'NR_GROUP_NAME', 'NR_GROUP_ID'], { g: 'g2' }),

    {
      id: 'sf', type: 'subflow', name: 'square', in: [{ ...at, wires: [{ id: 'sf-fn' }] }], out: [{ ...at, wires: [{ id: 'sf-fn', port: 0 }] }],
      env: [{ name: 'N', value: '2', type: 'num' }, { name: 'SQ', value: '$env("N") * $env("N") + $env("BASE")', type: 'jsonata' }],
    },
    { id: 'sf-fn', type: 'function', z: 'sf', name: 'sq', ...at, outputs: 1, wires: [[]], func: 'msg.payload = { SQ: env.get("SQ"), path: env.get("NR_NODE_PATH") }; return msg;' },
    { id: 'i5', type: 'subflow:sf', z: 't1', name: 'five', ...at, wires: [['out']], env: [{ name: 'N', value: '5', type: 'num' }] },
    { id: 'i2', type: 'subflow:sf', z: 't1', name: 'two', ...at, wires: [['out']] },

    // An instance inside a group reads the group's env through the instance.
    { id: 'g3', type: 'group', z: 't1', name: 'instances', nodes: ['ig'], env: [{ name: 'IN_GROUP', value: 'yes', type: 'str' }] },
    { id: 'sfg', type: 'subflow', name: 'grouped', in: [{ ...at, wires: [{ id: 'sfg-fn' }] }], out: [{ ...at, wires: [{ id: 'sfg-fn', port: 0 }] }] },
    { id: 'sfg-fn', type: 'function', z: 'sfg', name: 'grouped-fn', ...at, outputs: 1, wires: [[]], func: 'msg.payload = { g: env.get("IN_GROUP"), parent: env.get("$parent.IN_GROUP") }; return msg;' },
    { id: 'ig', type: 'subflow:sfg', z: 't1', g: 'g3', name: 'grouped instance', ...at, wires: [['out']] },
    { id: 'own-name', type: 'change', z: 't1', name: 'my name', ...at, wires: [['out']], rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '${NR_NODE_NAME}', tot: 'str' }] },
  ];
}

describe('env scopes: global-config, tab, group and subflow env, with JSONata values', () => {
  const suite = flowSuite(() => flows());

  const ask = async (id: string) => {
    const before = suite.capture.of('out').length;
    suite.receive(id, { payload: 'go' });
    const all = await suite.capture.waitFor('out', before + 1);
    // Function nodes build their objects in their own realm; compare them as plain data.
    return structuredClone(all[before].payload);
  };

  it('a global-config node is a known type: nothing waits for it', async () => {
    const res = await request(suite.server.at('flows/state'));
    assert.deepEqual(res.body, { state: 'start' });
  });

  it('tab env: JSONata values see earlier entries; env and cred entries; global env behind it', async () => {
    assert.deepEqual(await ask('tab-reader'), {
      BASE: 10, DOUBLE: 20, AFTER: 20, FROM_GLOBAL: 'ga', BROKEN: undefined, TAB_PW: 'pw1',
      GLOBAL_A: 'ga', GLOBAL_J: 'j-ga', GLOBAL_SECRET: 's3cret', SHADOWED: 'tab', G: undefined,
      NR_NODE_PATH: 't1/tab-reader', NR_GROUP_NAME: undefined,
    });
  });

  it('a whole ${X} node property takes the JSONata value (nodes are built after it is ready)', async () => {
    assert.equal(await ask('subst'), '20', 'the str type turns the substituted number into text, as in Node-RED');
  });

  it('object values are copied on every read', async () => {
    assert.deepEqual(await ask('mutator'), { a: 1 });
  });

  it('group env: nested groups, NR_GROUP_* names, group values shadow the tab', async () => {
    assert.deepEqual(await ask('group-reader'), {
      G: 'grp', H: 'grp-inner:10', SHADOWED: 'group', BASE: 10, NR_GROUP_NAME: 'inner group', NR_GROUP_ID: 'g2',
    });
  });

  it('subflow env: JSONata values per instance, with instance overrides', async () => {
    assert.deepEqual(await ask('i5'), { SQ: 35, path: 't1/i5/sf-fn' });
    assert.deepEqual(await ask('i2'), { SQ: 14, path: 't1/i2/sf-fn' });
  });

  it('a subflow instance in a group sees the group env, also through $parent.', async () => {
    assert.deepEqual(await ask('ig'), { g: 'yes', parent: 'yes' });
  });

  it('${NR_NODE_NAME} in a property is the name of the node being built', async () => {
    assert.equal(await ask('own-name'), 'my name');
  });

  it('credentials of env entries never leave the runtime', async () => {
    const res = await request(suite.server.at('flows'));
    const text = JSON.stringify(res.body);
    assert.ok(!text.includes('s3cret') && !text.includes('pw1'), text);
  });

  it('a changed global env reaches every flow after a "nodes" deploy', async () => {
    await deploy(suite.server, flows('changed'), { type: 'nodes' });
    const seen = (await ask('tab-reader')) as Record<string, unknown>;
    assert.equal(seen.GLOBAL_A, 'changed');
    assert.equal(seen.GLOBAL_J, 'j-changed');
    assert.equal(seen.FROM_GLOBAL, 'changed');
    assert.equal(seen.GLOBAL_SECRET, 's3cret', 'stored credentials survive a deploy that does not resend them');
  });

  it('without a global-config node, global lookups fall back to the process env', async () => {
    process.env.RUNNEL_TEST_GLOBAL_A = 'from-process';
    try {
      await deploy(suite.server, [
        { id: 't1', type: 'tab', label: 'main' },
        out(),
        reporter('tab-reader', 't1', ['GLOBAL_A', 'RUNNEL_TEST_GLOBAL_A']),
      ]);
      assert.deepEqual(await ask('tab-reader'), { GLOBAL_A: undefined, RUNNEL_TEST_GLOBAL_A: 'from-process' });
    } finally {
      delete process.env.RUNNEL_TEST_GLOBAL_A;
    }
  });
});

describe('group scopes', () => {
  it('groups naming each other as parents do not loop: the cycle is cut at the flow', async () => {
    const { buildGroupScopes } = await import('../../../../src/runtime/flows/group.js');
    const configs = new Map<string, Conf & { id: string; type: string }>([
      ['a', { id: 'a', type: 'group', g: 'b', env: [{ name: 'A', value: 'a', type: 'str' }] }],
      ['b', { id: 'b', type: 'group', g: 'a', env: [{ name: 'B', value: 'b', type: 'str' }] }],
    ]);
    const scopes = buildGroupScopes(configs, { getSetting: (n: string) => `flow:${n}` }, (_id, outside) => ({ outside, warn: () => {} }));
    assert.deepEqual([...scopes.keys()].sort(), ['a', 'b']);
    // Building a reaches b, whose parent a is still being built: b sits at the flow, a inside b.
    assert.equal(scopes.get('a')!.getSetting('B'), 'b');
    assert.equal(scopes.get('b')!.getSetting('A'), 'flow:A');
  });
});

describe('envVarExcludes', () => {
  process.env.RUNNEL_TEST_HIDDEN = 'hidden';
  const suite = flowSuite(
    () => [
      { id: 't1', type: 'tab', label: 'main', env: [{ name: 'VIA_TAB', value: 'RUNNEL_TEST_HIDDEN', type: 'env' }] },
      out(),
      reporter('reader', 't1', ['RUNNEL_TEST_HIDDEN', 'VIA_TAB']),
      { id: 'subst', type: 'change', z: 't1', name: 'subst', ...at, wires: [['out']], rules: [{ t: 'set', p: 'payload', pt: 'msg', to: '${RUNNEL_TEST_HIDDEN}', tot: 'str' }] },
    ],
    { envVarExcludes: ['RUNNEL_TEST_HIDDEN'] },
  );

  it('hides the listed process env variables from flows, however they are read', async () => {
    try {
      suite.receive('reader', {});
      const [reader] = await suite.capture.waitFor('out');
      assert.deepEqual(structuredClone(reader.payload), { RUNNEL_TEST_HIDDEN: undefined, VIA_TAB: undefined });
      suite.receive('subst', {});
      const [, subst] = await suite.capture.waitFor('out', 2);
      assert.equal(subst.payload, '${RUNNEL_TEST_HIDDEN}');
    } finally {
      delete process.env.RUNNEL_TEST_HIDDEN;
    }
  });
});
