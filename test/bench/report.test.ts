import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions } from '../../bench/cli-args.js';
import { renderMarkdown, summarise, type RunMeta } from '../../bench/report.js';
import { allScenarios } from '../../bench/scenarios/index.js';
import type { Scenario } from '../../bench/scenarios/types.js';

const scenario: Scenario = {
  name: 'deploy-x',
  description: 'a deploy',
  systems: ['runnel', 'node-red', 'bare'],
  metrics: [{ key: 'ms', label: 'until serving', unit: 'ms', digits: 0, vsCeiling: true, goals: [{ kind: 'ratio', op: '<=', value: 0.5 }] }],
  measure: () => Promise.resolve({}),
};

const everySystem = parseOptions([]).systems;

function meta(systems = everySystem): RunMeta {
  return {
    date: '2026-11-28T00:00:00.000Z', node: 'v20.20.2', cpus: 2, cpuModel: 'test', peer: '4.1.15', peer5: '5.0.7',
    systems, node24: 'v24.11.1', loadAverage: { start: 0.5, end: 0.7 }, options: {}, unavailable: {},
  };
}

describe('bench options', () => {
  it('measure Node-RED 5.0.7 and Runnel on Node 24 beside Runnel and Node-RED 4.1.15 by default', () => {
    assert.deepEqual([...everySystem].sort(), ['node-red', 'node-red-5', 'runnel', 'runnel-24']);
    assert.deepEqual(parseOptions(['--systems', 'runnel,node-red-5']).systems, ['runnel', 'node-red-5']);
    assert.throws(() => parseOptions(['--systems', 'node-red-3']), /--systems takes some of/);
  });

  it('--quick makes a run of minutes: one round, short loads, no scale point beyond 10,000 nodes; explicit flags still win', () => {
    const quick = parseOptions(['--quick']);
    assert.equal(quick.rounds, 1);
    assert.ok(quick.duration <= 2 && quick.loginDuration <= 2 && quick.bigNodes <= 1000 && quick.messages <= 20_000);
    assert.deepEqual(quick.deploySizes, [100, 1000]);
    const names = allScenarios(quick).map((s) => s.name);
    assert.ok(names.includes('scale-10000') && !names.includes('scale-50000') && !names.includes('scale-100000'));
    assert.ok(allScenarios(parseOptions([])).some((s) => s.name === 'scale-100000'));
    assert.equal(parseOptions(['--quick', '--rounds', '3']).rounds, 3);
  });
});

describe('bench report', () => {
  const summary = summarise(scenario, {
    ms: { runnel: [100, 120, 110], 'runnel-24': [90], 'node-red': [400], 'node-red-5': [180], bare: [50] },
  }, [], {}, everySystem);
  const [metric] = summary.metrics;

  it('gives Runnel’s ratio to each Node-RED version, and on Node 24 to 5.0.7 on the same Node', () => {
    assert.equal(metric.ratio, 110 / 400);
    assert.equal(metric.ratio5, 110 / 180);
    assert.equal(metric.ratio5On24, 90 / 180);
    assert.equal(metric.ofCeiling, 110 / 50);
  });

  it('checks a ratio goal against 4.1.15 and against 5.0.7, each with its own verdict', () => {
    assert.deepEqual(metric.verdicts, [
      { goal: 'ratio ≤ 0.5 vs 4.1.15', met: true },
      { goal: 'ratio ≤ 0.5 vs 5.0.7', met: false },
    ]);
  });

  it('leaves a 5.0.7 verdict pending when its figure is missing, and out when 5.0.7 is not in the run', () => {
    const missing = summarise(scenario, { ms: { runnel: [100], 'node-red': [400] } }, [], {}, everySystem);
    assert.deepEqual(missing.metrics[0].verdicts.map((v) => v.met), [true, undefined]);
    const without = summarise(scenario, { ms: { runnel: [100], 'node-red': [400] } }, [], {}, ['runnel', 'node-red']);
    assert.deepEqual(without.metrics[0].verdicts.map((v) => v.goal), ['ratio ≤ 0.5 vs 4.1.15']);
  });

  it('has a column per system and a ratio column per Node-RED version in the Markdown table', () => {
    const md = renderMarkdown([summary], meta());
    const [header, , row] = md.split('\n').filter((l) => l.startsWith('|'));
    for (const column of ['Runnel median', 'Runnel on Node 24 median', 'Node-RED 4.1.15 median', 'Node-RED 5.0.7 median', 'Runnel/Node-RED 4.1.15', 'Runnel/Node-RED 5.0.7']) {
      assert.ok(header.includes(column), `${column} in ${header}`);
    }
    assert.match(row, /\| 180 \(180–180\) \|/);
    assert.match(row, /\| 0\.611 \(on Node 24: 0\.500\) \|/);
    assert.match(md, /v24\.11\.1 \(Node-RED 5\.0\.7, Runnel on Node 24\)/);
    const narrow = renderMarkdown([summary], meta(['runnel', 'node-red'])).split('\n').find((l) => l.startsWith('|'))!;
    assert.ok(!narrow.includes('5.0.7') && !narrow.includes('Node 24'), narrow);
  });
});
