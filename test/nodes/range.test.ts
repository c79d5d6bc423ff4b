import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { node, type Conf, flowSuite } from './flow.js';

describe('range node', () => {
  const range = (action: string, extra: Conf = {}) => ({ minin: '0', maxin: '10', minout: '0', maxout: '100', action, round: false, property: 'payload', ...extra });
  const t = flowSuite(() => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'range' },
      node('scale', 'range', range('scale'), [['cap-scale']]),
      node('clamp', 'range', range('clamp'), [['cap-clamp']]),
      node('roll', 'range', range('roll', { minout: '0', maxout: '10' }), [['cap-roll']]),
      node('drop', 'range', range('drop'), [['cap-drop']]),
      node('round', 'range', range('scale', { maxout: '1', round: true, property: 'v' }), [['cap-round']]),
      node('reversed', 'range', range('drop', { minin: '10', maxin: '0' }), [['cap-reversed']]),
      node('narrow', 'range', range('scale', { minout: '0.5', maxout: '10.7', round: true }), [['cap-narrow']]),
      ...['cap-scale', 'cap-clamp', 'cap-roll', 'cap-drop', 'cap-round', 'cap-reversed', 'cap-narrow'].map((id) => node(id, 'test-capture')),
    ];
    return flows;
  });
  const { receive } = t;

  const values = async (name: string, count: number, prop = 'payload') => (await t.capture.waitFor(name, count)).map((m) => m[prop]);

  test('scale maps linearly and extrapolates; numeric strings count; other values are dropped', async () => {
    for (const payload of [5, -2, 15, '2.5', 'abc']) receive('scale', { payload });
    receive('scale', { topic: 'no payload' });
    const msgs = await t.capture.waitFor('cap-scale', 5);
    assert.deepEqual(msgs.map((m) => m.payload), [50, -20, 150, 25, undefined]);
    assert.equal(msgs[4].topic, 'no payload');
  });

  test('clamp limits the input to its range', async () => {
    for (const payload of [-5, 5, 50]) receive('clamp', { payload });
    assert.deepEqual(await values('cap-clamp', 3), [0, 50, 100]);
  });

  test('roll wraps the input into its range', async () => {
    for (const payload of [12, -3, 10]) receive('roll', { payload });
    assert.deepEqual(await values('cap-roll', 3), [2, 7, 0]);
  });

  test('drop discards out-of-range input', async () => {
    for (const payload of [-1, 3, 11, 10]) receive('drop', { payload });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await values('cap-drop', 2), [30, 100]);
  });

  test('round gives integers, on the configured property', async () => {
    for (const v of [4, 6]) receive('round', { v });
    assert.deepEqual(await values('cap-round', 2, 'v'), [0, 1]);
  });

  test('a reversed input range is swapped with the output range, so drop keeps what lies inside', async () => {
    for (const payload of [3, 11, 10]) receive('reversed', { payload });
    assert.deepEqual(await values('cap-reversed', 2), [70, 0]);
  });

  test('rounding narrows the output range to whole numbers first', async () => {
    for (const payload of [10, 0]) receive('narrow', { payload });
    assert.deepEqual(await values('cap-narrow', 2), [10, 1]);
  });
});
