import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/runtime/config/config.js';
import { deepEqual, diffConfigs, nodesDiffer, stopSet, type ConfigDiff } from '../../../src/runtime/config/diff.js';
import type { FlowNodeConfig } from '../../../src/storage/contract.js';

const KNOWN = new Set(['inject', 'function', 'debug', 'mqtt in', 'mqtt-broker', 'tls-config', 'global-config', 'link in', 'link out']);
const known = (type: string) => KNOWN.has(type);

interface Summary {
  added: string[];
  changed: string[];
  removed: string[];
  rewired: string[];
  linked: string[];
  flowChanged: string[];
  globalConfigChanged: boolean;
}

const NOTHING: Summary = { added: [], changed: [], removed: [], rewired: [], linked: [], flowChanged: [], globalConfigChanged: false };

function summary(diff: ConfigDiff): Summary {
  const sorted = (set: Set<string>) => [...set].sort();
  return {
    added: sorted(diff.added),
    changed: sorted(diff.changed),
    removed: sorted(diff.removed),
    rewired: sorted(diff.rewired),
    linked: sorted(diff.linked),
    flowChanged: sorted(diff.flowChanged),
    globalConfigChanged: diff.globalConfigChanged,
  };
}

/** Chain A→B→C and D alone on t1; broker config `cfg` used by E→F on t2. */
function base(): FlowNodeConfig[] {
  return [
    { id: 't1', type: 'tab', label: 'One' },
    { id: 'A', type: 'inject', z: 't1', x: 100, y: 100, wires: [['B']] },
    { id: 'B', type: 'function', z: 't1', x: 200, y: 100, func: 'return msg;', wires: [['C']] },
    { id: 'C', type: 'debug', z: 't1', x: 300, y: 100, wires: [] },
    { id: 'D', type: 'debug', z: 't1', x: 100, y: 200, wires: [] },
    { id: 't2', type: 'tab', label: 'Two' },
    { id: 'E', type: 'mqtt in', z: 't2', broker: 'cfg', topic: 'a', x: 100, y: 100, wires: [['F']] },
    { id: 'F', type: 'debug', z: 't2', x: 200, y: 100, wires: [] },
    { id: 'cfg', type: 'mqtt-broker', broker: 'localhost', port: 1883 },
  ];
}

type Edit = (nodes: Map<string, FlowNodeConfig>, flows: FlowNodeConfig[]) => FlowNodeConfig[] | void;

/** Parses `before` and an edited deep copy of it. */
function pair(before: FlowNodeConfig[], edit: Edit) {
  const copy = structuredClone(before);
  const byId = new Map(copy.map((n) => [n.id, n]));
  const after = edit(byId, copy) ?? copy;
  return { old: parseConfig(before, known), next: parseConfig(after, known) };
}

function diffAfter(before: FlowNodeConfig[], edit: Edit, credentials: Iterable<string> = []) {
  const { old, next } = pair(before, edit);
  const diff = diffConfigs(old, next, new Set(credentials));
  return { diff, old, next };
}

function summarise(before: FlowNodeConfig[], edit: Edit, credentials: Iterable<string> = []): Summary {
  return summary(diffAfter(before, edit, credentials).diff);
}

const without = (flows: FlowNodeConfig[], id: string) => flows.filter((n) => n.id !== id);
const sortedStop = (type: 'full' | 'nodes' | 'flows', r: ReturnType<typeof diffAfter>) => [...stopSet(type, r.diff, r.old, r.next)].sort();

describe('diffConfigs: the verified Node-RED examples', () => {
  it('move B (x/y): nothing', () => {
    assert.deepEqual(summarise(base(), (n) => void Object.assign(n.get('B')!, { x: 250, y: 150 })), NOTHING);
  });

  it('B.func changed: changed [B, t1]; linked [A, C]', () => {
    assert.deepEqual(summarise(base(), (n) => void (n.get('B')!.func = 'return null;')), {
      ...NOTHING,
      changed: ['B', 't1'],
      linked: ['A', 'C'],
    });
  });

  it('A rewired to D instead of B: changed [t1]; rewired [A]; linked [B, C, D]', () => {
    assert.deepEqual(summarise(base(), (n) => void (n.get('A')!.wires = [['D']])), {
      ...NOTHING,
      changed: ['t1'],
      rewired: ['A'],
      linked: ['B', 'C', 'D'],
    });
  });

  it('cfg.broker changed: changed [cfg, E, t2]; linked [F]', () => {
    assert.deepEqual(summarise(base(), (n) => void (n.get('cfg')!.broker = 'remote')), {
      ...NOTHING,
      changed: ['E', 'cfg', 't2'],
      linked: ['F'],
    });
  });

  it('add G: added [G]; changed [t1]', () => {
    const edit: Edit = (_n, flows) => [...flows, { id: 'G', type: 'debug', z: 't1', x: 1, y: 1, wires: [] }];
    assert.deepEqual(summarise(base(), edit), { ...NOTHING, added: ['G'], changed: ['t1'] });
  });

  it('remove C (B rewired): removed [C]; rewired [B]; linked [A]; changed [t1]', () => {
    const edit: Edit = (n, flows) => {
      n.get('B')!.wires = [[]];
      return without(flows, 'C');
    };
    assert.deepEqual(summarise(base(), edit), { ...NOTHING, removed: ['C'], rewired: ['B'], linked: ['A'], changed: ['t1'] });
  });

  it('disable t2: removed [t2, E, F], and t2 is restarted as a whole', () => {
    assert.deepEqual(summarise(base(), (n) => void (n.get('t2')!.disabled = true)), {
      ...NOTHING,
      removed: ['E', 'F', 't2'],
      flowChanged: ['t2'],
    });
  });

  it('tab env changed: flowChanged [t1]', () => {
    const edit: Edit = (n) => void (n.get('t1')!.env = [{ name: 'X', type: 'str', value: '1' }]);
    assert.deepEqual(summarise(base(), edit), { ...NOTHING, flowChanged: ['t1'] });
  });

  it('tab label changed alone: nothing', () => {
    assert.deepEqual(summarise(base(), (n) => void (n.get('t1')!.label = 'Renamed')), NOTHING);
  });
});

describe('diffConfigs: changes and propagation', () => {
  it('counts a node with new credentials as changed even when its properties are equal', () => {
    assert.deepEqual(summarise(base(), () => undefined, ['cfg']), { ...NOTHING, changed: ['E', 'cfg', 't2'], linked: ['F'] });
  });

  it('restarts a tab whose credentials (cred env values) changed', () => {
    assert.deepEqual(summarise(base(), () => undefined, ['t1']), { ...NOTHING, flowChanged: ['t1'] });
  });

  it('propagates through chains of config nodes to a fixed point', () => {
    const flows = [...base(), { id: 'tls', type: 'tls-config', cert: 'a' }];
    flows.find((n) => n.id === 'cfg')!.tls = 'tls';
    assert.deepEqual(summarise(flows, (n) => void (n.get('tls')!.cert = 'b')), {
      ...NOTHING,
      changed: ['E', 'cfg', 't2', 'tls'],
      linked: ['F'],
    });
  });

  it('marks users of a removed config node, including new nodes naming it', () => {
    const edit: Edit = (_n, flows) => [...without(flows, 'cfg'), { id: 'G', type: 'mqtt in', z: 't1', broker: 'cfg', x: 1, y: 1, wires: [] }];
    assert.deepEqual(summarise(base(), edit), {
      ...NOTHING,
      added: ['G'],
      removed: ['cfg'],
      changed: ['E', 'G', 't1', 't2'],
      linked: ['F'],
    });
  });

  it('follows one-element array references such as link targets', () => {
    const flows: FlowNodeConfig[] = [
      { id: 't1', type: 'tab' },
      { id: 'lo', type: 'link out', z: 't1', links: ['li'], x: 1, y: 1, wires: [] },
      { id: 'li', type: 'link in', z: 't1', name: 'in', links: ['lo'], x: 2, y: 1, wires: [] },
    ];
    assert.deepEqual(summarise(flows, (n) => void (n.get('li')!.name = 'renamed')), { ...NOTHING, changed: ['li', 'lo', 't1'] });
  });

  it('ignores a changed property order, but not a changed key set', () => {
    assert.equal(nodesDiffer({ id: 'a', type: 't', p: 1, q: { r: [1, 2] } }, { q: { r: [1, 2] }, p: 1, type: 't', id: 'a' }), false);
    assert.equal(nodesDiffer({ id: 'a', type: 't', p: 1 }, { id: 'a', type: 't', p: 1, extra: null }), true);
    assert.equal(nodesDiffer({ id: 'a', type: 't', p: 1 }, { id: 'a', type: 't', q: 1 }), true);
    assert.equal(nodesDiffer({ id: 'a', type: 't', x: 1, wires: [] }, { id: 'a', type: 't', x: 2, y: 3, wires: [['b']] }), false);
    assert.equal(deepEqual([1, [2, { a: 'x' }]], [1, [2, { a: 'x' }]]), true);
    assert.equal(deepEqual({ a: [] }, { a: {} }), false);
    assert.equal(deepEqual({ a: 1, b: 2 }, { a: 1, c: 2 }), false);
  });
});

describe('diffConfigs: disabling and enabling', () => {
  it('a node set to d:true is removed and changed', () => {
    assert.deepEqual(summarise(base(), (n) => void (n.get('B')!.d = true)), {
      ...NOTHING,
      removed: ['B'],
      changed: ['B', 't1'],
      linked: ['A', 'C'],
    });
  });

  it('a node enabled again is changed only', () => {
    const flows = base();
    flows.find((n) => n.id === 'B')!.d = true;
    assert.deepEqual(summarise(flows, (n) => void delete n.get('B')!.d), { ...NOTHING, changed: ['B', 't1'], linked: ['A', 'C'] });
  });

  it('a tab enabled again adds the tab and all its nodes', () => {
    const flows = base();
    flows.find((n) => n.id === 't2')!.disabled = true;
    assert.deepEqual(summarise(flows, (n) => void (n.get('t2')!.disabled = false)), {
      ...NOTHING,
      added: ['E', 'F', 't2'],
      flowChanged: ['t2'],
    });
  });

  it('a deleted tab removes its nodes; a new tab is added with its nodes', () => {
    const edit: Edit = (_n, flows) => [
      ...flows.filter((n) => n.id !== 't2' && n.z !== 't2'),
      { id: 't3', type: 'tab' },
      { id: 'H', type: 'debug', z: 't3', x: 1, y: 1, wires: [] },
    ];
    assert.deepEqual(summarise(base(), edit), {
      ...NOTHING,
      added: ['H', 't3'],
      changed: ['t3'],
      removed: ['E', 'F', 't2'],
      flowChanged: ['t2', 't3'],
    });
  });
});

describe('diffConfigs: subflows', () => {
  /** S1 holds s1a; S2 holds an instance of S1; t1 has an instance of each, i2 wired to dbg. */
  function nested(): FlowNodeConfig[] {
    return [
      { id: 't1', type: 'tab' },
      { id: 'S1', type: 'subflow', name: 'inner', in: [{ x: 10, y: 10, wires: [{ id: 's1a' }] }], out: [], env: [] },
      { id: 's1a', type: 'function', z: 'S1', func: 'return msg;', x: 1, y: 1, wires: [] },
      { id: 's1b', type: 'debug', z: 'S1', x: 2, y: 1, wires: [] },
      { id: 'S2', type: 'subflow', name: 'outer', in: [], out: [] },
      { id: 's2i', type: 'subflow:S1', z: 'S2', x: 1, y: 1, wires: [] },
      { id: 'i1', type: 'subflow:S1', z: 't1', x: 1, y: 1, wires: [] },
      { id: 'i2', type: 'subflow:S2', z: 't1', x: 2, y: 1, wires: [['dbg']] },
      { id: 'dbg', type: 'debug', z: 't1', x: 3, y: 1, wires: [] },
      { id: 'i3', type: 'subflow:S2', z: 't1', x: 4, y: 1, wires: [] },
    ];
  }
  const cascade = { ...NOTHING, changed: ['S1', 'S2', 'i1', 'i2', 'i3', 't1'], linked: ['dbg'] };

  it('a change inside a template marks the template and every instance, through nested templates', () => {
    const r = diffAfter(nested(), (n) => void (n.get('s1a')!.func = 'return null;'));
    assert.deepEqual(summary(r.diff), cascade);
    assert.deepEqual(sortedStop('nodes', r), ['i1', 'i2', 'i3']);
  });

  it('a change of the template itself cascades the same way', () => {
    const edit: Edit = (n) => void (n.get('S1')!.env = [{ name: 'A', type: 'str', value: '1' }]);
    assert.deepEqual(summarise(nested(), edit), cascade);
  });

  it('internal rewiring and additions are folded into the template', () => {
    const edit: Edit = (n, flows) => {
      n.get('s1a')!.wires = [['s1b']];
      return [...flows, { id: 's1c', type: 'debug', z: 'S1', x: 5, y: 5, wires: [] }];
    };
    assert.deepEqual(summarise(nested(), edit), cascade);
  });

  it('a removed internal node stays in removed but is never stopped on its own', () => {
    const r = diffAfter(nested(), (n, flows) => {
      n.get('S1')!.in = [];
      return without(flows, 's1a');
    });
    assert.deepEqual(summary(r.diff), { ...cascade, removed: ['s1a'] });
    assert.deepEqual(sortedStop('nodes', r), ['i1', 'i2', 'i3']);
  });

  it('changing only the outer template leaves the inner instances alone', () => {
    const r = diffAfter(nested(), (n) => void (n.get('S2')!.name = 'outer2'));
    assert.deepEqual(summary(r.diff), { ...NOTHING, changed: ['S2', 'i2', 'i3', 't1'], linked: ['dbg'] });
  });
});

describe('diffConfigs: groups', () => {
  /** G1 holds n1 and the nested group G2, which holds n2; n3 is outside. */
  function grouped(): FlowNodeConfig[] {
    return [
      { id: 't1', type: 'tab' },
      { id: 'G1', type: 'group', z: 't1', name: 'outer', nodes: ['n1', 'G2'], style: {}, x: 0, y: 0, w: 400, h: 300 },
      { id: 'G2', type: 'group', z: 't1', g: 'G1', nodes: ['n2'], style: {}, x: 10, y: 10, w: 100, h: 100 },
      { id: 'n1', type: 'debug', z: 't1', g: 'G1', x: 1, y: 1, wires: [] },
      { id: 'n2', type: 'debug', z: 't1', g: 'G2', x: 2, y: 2, wires: [] },
      { id: 'n3', type: 'debug', z: 't1', x: 500, y: 500, wires: [] },
    ];
  }

  it('a group change reaches its members and nested groups', () => {
    const r = diffAfter(grouped(), (n) => void (n.get('G1')!.env = [{ name: 'A', type: 'str', value: '1' }]));
    assert.deepEqual(summary(r.diff), { ...NOTHING, changed: ['G1', 'G2', 'n1', 'n2', 't1'] });
    assert.deepEqual(sortedStop('nodes', r), ['n1', 'n2']);
  });

  it('layout-only group edits (nodes, style, w, h) change nothing', () => {
    const edit: Edit = (n) => void Object.assign(n.get('G1')!, { w: 500, h: 350, style: { fill: '#fff' }, nodes: ['G2', 'n1'] });
    assert.deepEqual(summarise(grouped(), edit), NOTHING);
  });

  it('moving a node into a group changes that node only', () => {
    const edit: Edit = (n) => {
      n.get('n3')!.g = 'G1';
      n.get('G1')!.nodes = ['n1', 'G2', 'n3'];
    };
    assert.deepEqual(summarise(grouped(), edit), { ...NOTHING, changed: ['n3', 't1'] });
  });

  it('a change of the only member of a nested group does not restart the outer group', () => {
    assert.deepEqual(summarise(grouped(), (n) => void (n.get('n2')!.name = 'x')), { ...NOTHING, changed: ['n2', 't1'] });
  });
});

describe('diffConfigs: global-config', () => {
  it('a global-config change forces a full restart whatever the type', () => {
    const flows = [...base(), { id: 'gc', type: 'global-config', env: [] }];
    const r = diffAfter(flows, (n) => void (n.get('gc')!.env = [{ name: 'A', type: 'str', value: '1' }]));
    assert.deepEqual(summary(r.diff), { ...NOTHING, changed: ['gc'], globalConfigChanged: true });
    const everything = ['A', 'B', 'C', 'D', 'E', 'F', 'cfg', 'gc'];
    assert.deepEqual(sortedStop('nodes', r), everything);
    assert.deepEqual(sortedStop('flows', r), everything);
  });
});

describe('stopSet', () => {
  it('nodes = changed and removed runnable nodes; flows adds linked and rewired; full = everything', () => {
    const r = diffAfter(base(), (n) => void (n.get('B')!.func = 'return null;'));
    assert.deepEqual(sortedStop('nodes', r), ['B']);
    assert.deepEqual(sortedStop('flows', r), ['A', 'B', 'C']);
    assert.deepEqual(sortedStop('full', r), ['A', 'B', 'C', 'D', 'E', 'F', 'cfg']);
  });

  it('does not restart rewired nodes in a nodes deploy', () => {
    const r = diffAfter(base(), (n) => void (n.get('A')!.wires = [['D']]));
    assert.deepEqual(sortedStop('nodes', r), []);
    assert.deepEqual(sortedStop('flows', r), ['A', 'B', 'C', 'D']);
  });

  it('restarts a config node change with its users', () => {
    const r = diffAfter(base(), (n) => void (n.get('cfg')!.port = 8883));
    assert.deepEqual(sortedStop('nodes', r), ['E', 'cfg']);
    assert.deepEqual(sortedStop('flows', r), ['E', 'F', 'cfg']);
  });

  it('restarts every node of a tab whose env changed, and of a disabled or removed tab', () => {
    const env = diffAfter(base(), (n) => void (n.get('t1')!.env = [{ name: 'X', type: 'str', value: '1' }]));
    assert.deepEqual(sortedStop('nodes', env), ['A', 'B', 'C', 'D']);
    assert.deepEqual(sortedStop('flows', env), ['A', 'B', 'C', 'D']);
    const disabled = diffAfter(base(), (n) => void (n.get('t2')!.disabled = true));
    assert.deepEqual(sortedStop('nodes', disabled), ['E', 'F']);
    const removed = diffAfter(base(), (_n, flows) => flows.filter((n) => n.id !== 't2' && n.z !== 't2'));
    assert.deepEqual(sortedStop('nodes', removed), ['E', 'F']);
  });

  it('includes removed nodes, which exist only in the old configuration', () => {
    const r = diffAfter(base(), (n, flows) => {
      n.get('B')!.wires = [[]];
      return without(flows, 'C');
    });
    assert.deepEqual(sortedStop('nodes', r), ['C']);
    assert.deepEqual(sortedStop('flows', r), ['A', 'B', 'C']);
  });
});

describe('diffConfigs at scale', () => {
  /** 10 tabs of 100 chains of 10 nodes; every chain head uses one of 50 shared config nodes. */
  function large(): FlowNodeConfig[] {
    const flows: FlowNodeConfig[] = [];
    for (let c = 0; c < 50; c++) flows.push({ id: `cfg${c}`, type: 'mqtt-broker', broker: `host${c}`, port: 1883 });
    for (let t = 0; t < 10; t++) {
      flows.push({ id: `tab${t}`, type: 'tab', label: `Tab ${t}`, env: [] });
      for (let c = 0; c < 100; c++) {
        for (let i = 0; i < 10; i++) {
          const id = `n${t}-${c}-${i}`;
          const next = i < 9 ? [[`n${t}-${c}-${i + 1}`]] : [];
          const node: FlowNodeConfig =
            i === 0
              ? { id, type: 'mqtt in', z: `tab${t}`, broker: `cfg${(t * 100 + c) % 50}`, topic: id, x: i * 100, y: c * 40, wires: next }
              : { id, type: 'function', z: `tab${t}`, name: id, func: `msg.step = ${i};\nreturn msg;`, outputs: 1, x: i * 100, y: c * 40, wires: next };
          flows.push(node);
        }
      }
    }
    return flows;
  }

  it('diffs two 10,000-node configurations down to the one changed node', () => {
    const before = large();
    assert.equal(before.length, 10_060);
    const r = diffAfter(before, (n) => void (n.get('n3-42-5')!.func = 'return null;'));
    const chain = Array.from({ length: 10 }, (_, i) => `n3-42-${i}`);
    assert.deepEqual(summary(r.diff), {
      ...NOTHING,
      changed: ['n3-42-5', 'tab3'],
      linked: chain.filter((id) => id !== 'n3-42-5').sort(),
    });
    assert.deepEqual(sortedStop('nodes', r), ['n3-42-5']);
    assert.deepEqual(sortedStop('flows', r), [...chain].sort());
  });

  it('reaches every user of a shared config node without rescanning', () => {
    const r = diffAfter(large(), (n) => void (n.get('cfg7')!.port = 8883));
    const users = ['cfg7'];
    for (let t = 0; t < 10; t++) for (let c = 0; c < 100; c++) if ((t * 100 + c) % 50 === 7) users.push(`n${t}-${c}-0`);
    assert.equal(users.length, 21);
    assert.deepEqual(sortedStop('nodes', r), users.sort());
    assert.equal(r.diff.linked.size, 20 * 9);
  });
});
