import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isActive, isRunnable, parseConfig, referenceKey } from '../../../src/runtime/config/config.js';
import type { FlowNodeConfig } from '../../../src/storage/contract.js';

const KNOWN = new Set(['inject', 'function', 'debug', 'mqtt in', 'mqtt-broker', 'tls-config', 'junction']);
const known = (type: string) => KNOWN.has(type);

function sample(): FlowNodeConfig[] {
  return [
    { id: 't2', type: 'tab', label: 'Second' },
    { id: 't1', type: 'tab', label: 'First', disabled: false },
    { id: 'S1', type: 'subflow', name: 'sub', in: [], out: [] },
    { id: 'n1', type: 'inject', z: 't1', x: 10, y: 10, wires: [['n2', 'j1']] },
    { id: 'n2', type: 'mqtt in', z: 't1', broker: 'cfg', x: 20, y: 10, wires: [['j1']] },
    { id: 'j1', type: 'junction', z: 't1', x: 30, y: 10, wires: [['n3']] },
    { id: 'n3', type: 'debug', z: 't2', x: 40, y: 10, g: 'g1', wires: [] },
    { id: 'g1', type: 'group', z: 't2', nodes: ['n3'], x: 0, y: 0, w: 100, h: 100 },
    { id: 'c1', type: 'tls-config', z: 't1', cert: '' },
    { id: 'cfg', type: 'mqtt-broker', broker: 'localhost', tls: 'c1' },
    { id: 'cfgElsewhere', type: 'mqtt-broker', z: 'nowhere' },
    { id: 'i1', type: 'subflow:S1', z: 't2', x: 50, y: 10, wires: [] },
    { id: 's1n', type: 'function', z: 'S1', x: 60, y: 10, wires: [] },
    { id: 's1c', type: 'mqtt-broker', z: 'S1' },
    { id: 'o1', type: 'debug', z: 'nowhere', x: 70, y: 10, wires: [] },
    { id: 'o2', type: 'debug', x: 80, y: 10, wires: [] },
  ];
}

describe('parseConfig classification', () => {
  const parsed = parseConfig(sample(), known);

  it('indexes every element by id', () => {
    assert.equal(parsed.all.size, 16);
    assert.equal(parsed.all.get('n2')?.broker, 'cfg');
  });

  it('keeps tabs in configuration order and subflow templates apart', () => {
    assert.deepEqual([...parsed.tabs.keys()], ['t2', 't1']);
    assert.deepEqual([...parsed.subflows.keys()], ['S1']);
    assert.equal(parsed.tabs.get('t1')?.kind, 'tab');
    assert.equal(parsed.subflows.get('S1')?.kind, 'subflow');
    assert.equal(parsed.subflows.get('S1')?.disabled, false);
  });

  it('splits flow nodes (x and y), config nodes, subflow instances and groups per container', () => {
    const t1 = parsed.tabs.get('t1')!;
    assert.deepEqual([...t1.nodes.keys()], ['n1', 'n2', 'j1']);
    assert.deepEqual([...t1.configs.keys()], ['c1']);
    assert.deepEqual([...t1.subflowInstances.keys()], []);
    const t2 = parsed.tabs.get('t2')!;
    assert.deepEqual([...t2.nodes.keys()], ['n3']);
    assert.deepEqual([...t2.subflowInstances.keys()], ['i1']);
    assert.deepEqual([...t2.groups.keys()], ['g1']);
    const s1 = parsed.subflows.get('S1')!;
    assert.deepEqual([...s1.nodes.keys()], ['s1n']);
    assert.deepEqual([...s1.configs.keys()], ['s1c']);
  });

  it('treats config nodes without a container (no z, or z naming nothing) as global', () => {
    assert.deepEqual([...parsed.globalConfigs.keys()], ['cfg', 'cfgElsewhere']);
  });

  it('reports flow nodes outside any tab or subflow as orphans', () => {
    assert.deepEqual(parsed.orphans, ['o1', 'o2']);
  });

  it('has no missing types when every type is known or structural', () => {
    assert.deepEqual(parsed.missingTypes, []);
  });

  it('lists the users of each config node, scoped or global', () => {
    assert.deepEqual(parsed.users.get('cfg'), ['n2']);
    assert.deepEqual(parsed.users.get('c1'), ['cfg']);
    assert.deepEqual(parsed.users.get('s1c'), []);
    assert.equal(parsed.users.has('n2'), false);
  });

  it('builds the wire and subflow instance indexes', () => {
    assert.deepEqual(parsed.wireSources.get('j1'), ['n1', 'n2']);
    assert.deepEqual(parsed.wireSources.get('n3'), ['j1']);
    assert.deepEqual(parsed.instances.get('S1'), ['i1']);
  });

  it('indexes only property values that name an element, never id, z or wires', () => {
    assert.deepEqual(parsed.references.get('cfg'), [{ from: 'n2', prop: 'broker' }]);
    assert.deepEqual(parsed.references.get('g1'), [{ from: 'n3', prop: 'g' }]);
    assert.equal(parsed.references.has('t1'), false);
    assert.equal(parsed.references.has('n2'), false);
    assert.equal(parsed.references.has('localhost'), false);
  });
});

describe('parseConfig missing types', () => {
  it('lists unknown types and instances of absent templates once, in first-seen order', () => {
    const parsed = parseConfig(
      [
        { id: 't1', type: 'tab' },
        { id: 'S1', type: 'subflow' },
        { id: 'a', type: 'foo', z: 't1', x: 1, y: 1 },
        { id: 'b', type: 'subflow:nope', z: 't1', x: 1, y: 1 },
        { id: 'c', type: 'foo', z: 't1', x: 1, y: 1 },
        { id: 'd', type: 'subflow:S1', z: 't1', x: 1, y: 1 },
        { id: 'e', type: 'bar-config' },
        { id: 'g', type: 'group', z: 't1' },
      ],
      () => false,
    );
    assert.deepEqual(parsed.missingTypes, ['foo', 'subflow:nope', 'bar-config']);
  });
});

describe('parseConfig duplicate ids', () => {
  it('keeps the last element with a given id, as Node-RED does', () => {
    const parsed = parseConfig(
      [
        { id: 't1', type: 'tab' },
        { id: 'a', type: 'debug', z: 't1', x: 1, y: 1, name: 'first' },
        { id: 'a', type: 'debug', z: 't1', x: 1, y: 1, name: 'second' },
      ],
      known,
    );
    assert.equal(parsed.all.get('a')?.name, 'second');
    assert.equal(parsed.tabs.get('t1')?.nodes.get('a')?.name, 'second');
  });
});

describe('isActive and isRunnable', () => {
  const flows = sample();
  flows.push(
    { id: 't3', type: 'tab', disabled: true },
    { id: 'off', type: 'debug', z: 't3', x: 1, y: 1 },
    { id: 'dis', type: 'debug', z: 't1', x: 1, y: 1, d: true },
  );
  const parsed = parseConfig(flows, known);

  it('runs nodes that are not disabled on enabled tabs, global config nodes and template internals', () => {
    for (const id of ['n1', 'c1', 'cfg', 'cfgElsewhere', 'i1', 's1n', 't1']) assert.equal(isActive(parsed, id), true, id);
  });

  it('does not run disabled nodes, nodes of disabled tabs, disabled tabs, orphans or unknown ids', () => {
    for (const id of ['dis', 'off', 't3', 'o1', 'o2', 'missing']) assert.equal(isActive(parsed, id), false, id);
  });

  it('calls runnable only what the engine instantiates directly', () => {
    for (const id of ['n1', 'j1', 'c1', 'cfg', 'cfgElsewhere', 'i1', 'off', 'dis']) assert.equal(isRunnable(parsed, id), true, id);
    for (const id of ['t1', 'S1', 'g1', 's1n', 's1c', 'o1', 'o2', 'missing']) assert.equal(isRunnable(parsed, id), false, id);
  });
});

describe('referenceKey', () => {
  it('coerces values the way an object-key lookup does, for plausible ids only', () => {
    assert.equal(referenceKey('abc'), 'abc');
    assert.equal(referenceKey(12), '12');
    assert.equal(referenceKey(['abc']), 'abc');
    assert.equal(referenceKey([['abc']]), 'abc');
    assert.equal(referenceKey(['a', 'b']), undefined);
    assert.equal(referenceKey([]), undefined);
    assert.equal(referenceKey({ id: 'abc' }), undefined);
    assert.equal(referenceKey(null), undefined);
    assert.equal(referenceKey(true), undefined);
  });
});
