import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { node, type Conf, flowSuite } from './flow.js';

const outputs = (id: string, n: number) => Array.from({ length: n }, (_, i) => [`${id}-${i + 1}`]);
const caps = (id: string, n: number) => Array.from({ length: n }, (_, i) => node(`${id}-${i + 1}`, 'test-capture'));
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('switch node', () => {
  /** Which outputs of `id` got each message id, as `{output: [ids]}`. */
  const routes = (id: string, n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [i + 1, t.capture.of(`${id}-${i + 1}`).map((m) => m._msgid)]));
  const t = flowSuite((server) => {
    const flows: Conf[] = [
      { id: 't1', type: 'tab', label: 'switch' },
      node('cmp', 'switch', {
        property: 'payload', propertyType: 'msg', checkall: 'true', outputs: 5,
        rules: [
          { t: 'eq', v: 'a', vt: 'str' },
          { t: 'gt', v: '10', vt: 'num' },
          { t: 'btwn', v: '1', vt: 'num', v2: '5', v2t: 'num' },
          { t: 'regex', v: '^HE', vt: 'str', case: true },
          { t: 'else' },
        ],
      }, outputs('cmp', 5)),
      node('first', 'switch', {
        property: 'payload', checkall: 'false', outputs: 2,
        rules: [{ t: 'nnull' }, { t: 'istype', v: 'string', vt: 'string' }],
      }, outputs('first', 2)),
      node('all', 'switch', {
        property: 'payload', checkall: 'true', outputs: 2,
        rules: [{ t: 'nnull' }, { t: 'istype', v: 'string', vt: 'string' }],
      }, outputs('all', 2)),
      node('prev', 'switch', { property: 'payload', rules: [{ t: 'neq', v: '', vt: 'prev' }], outputs: 1 }, outputs('prev', 1)),
      node('kinds', 'switch', {
        property: 'payload', checkall: 'true', outputs: 7,
        rules: [
          { t: 'hask', v: 'k', vt: 'str' },
          { t: 'empty' },
          { t: 'nempty' },
          { t: 'cont', v: 'ell', vt: 'str' },
          { t: 'true' },
          { t: 'null' },
          { t: 'eq', v: 'limit', vt: 'flow' },
        ],
      }, outputs('kinds', 7)),
      node('parts', 'switch', {
        property: 'payload', checkall: 'true', outputs: 3,
        rules: [{ t: 'head', v: '1', vt: 'num' }, { t: 'index', v: '1', vt: 'num', v2: '2', v2t: 'num' }, { t: 'tail', v: '1', vt: 'num' }],
      }, outputs('parts', 3)),
      node('expr', 'switch', {
        property: 'payload.a + payload.b', propertyType: 'jsonata', checkall: 'true', outputs: 2,
        rules: [{ t: 'eq', v: '3', vt: 'num' }, { t: 'jsonata_exp', v: 'payload.a = 1', vt: 'jsonata' }],
      }, outputs('expr', 2)),
      node('repair', 'switch', {
        property: 'payload', checkall: 'true', repair: true, outputs: 2,
        rules: [{ t: 'gt', v: '1', vt: 'num' }, { t: 'else' }],
      }, outputs('repair', 2)),
      node('tail', 'switch', { property: 'payload', outputs: 1, rules: [{ t: 'tail', v: '2', vt: 'num' }] }, outputs('tail', 1)),
      node('bad-prop', 'switch', { property: '$error("boom")', propertyType: 'jsonata', outputs: 1, rules: [{ t: 'true' }] }, outputs('bad-prop', 1)),
      node('bad-rule', 'switch', { property: 'payload', outputs: 1, rules: [{ t: 'jsonata_exp', v: '$error("bang")', vt: 'jsonata' }] }, outputs('bad-rule', 1)),
      node('catch', 'catch', { scope: ['bad-prop', 'bad-rule'], uncaught: false }, [['cap-catch']]),
      node('cap-catch', 'test-capture'),
      ...caps('repair', 2), ...caps('tail', 1), ...caps('bad-prop', 1), ...caps('bad-rule', 1),
      ...caps('cmp', 5), ...caps('first', 2), ...caps('all', 2), ...caps('prev', 1), ...caps('kinds', 7), ...caps('parts', 3), ...caps('expr', 2),
    ];
    server.instance.runtime.services.context.getFlowContext('t1').set('limit', 99);
    return flows;
  });
  const { receive } = t;

  test('comparison rules route to every matching output, else when none matched', async () => {
    for (const [id, payload] of [['a', 'a'], ['12', 12], ['3', 3], ['hello', 'hello'], ['zzz', 'zzz'], ['ten', '10']] as const) {
      receive('cmp', { _msgid: id, payload });
    }
    await t.capture.waitFor('cmp-5', 2);
    await settle();
    assert.deepEqual(routes('cmp', 5), { 1: ['a'], 2: ['12'], 3: ['3'], 4: ['hello'], 5: ['zzz', 'ten'] });
    assert.deepEqual(t.capture.of('cmp-2')[0], { _msgid: '12', payload: 12 });
  });

  test('checkall "false" stops at the first match', async () => {
    receive('first', { _msgid: 'x', payload: 'text' });
    receive('all', { _msgid: 'y', payload: 'text' });
    await t.capture.waitFor('all-2');
    await settle();
    assert.deepEqual(routes('first', 2), { 1: ['x'], 2: [] });
    assert.deepEqual(routes('all', 2), { 1: ['y'], 2: ['y'] });
    assert.notEqual(t.capture.of('all-1')[0], t.capture.of('all-2')[0], 'each output gets its own copy');
  });

  test('prev compares with the previous value', async () => {
    for (const [id, payload] of [['p1', 1], ['p2', 1], ['p3', 2]] as const) receive('prev', { _msgid: id, payload });
    await t.capture.waitFor('prev-1', 2);
    await settle();
    assert.deepEqual(routes('prev', 1), { 1: ['p1', 'p3'] });
  });

  test('key, emptiness, containment, boolean, null and context rules', async () => {
    const inputs: [string, unknown][] = [['obj', { k: 1 }], ['empty', ''], ['str', 'hello'], ['yes', true], ['nul', null], ['ctx', 99]];
    for (const [id, payload] of inputs) receive('kinds', { _msgid: id, payload });
    await t.capture.waitFor('kinds-7');
    await settle();
    assert.deepEqual(routes('kinds', 7), { 1: ['obj'], 2: ['empty'], 3: ['obj', 'str'], 4: ['str'], 5: ['yes'], 6: ['nul'], 7: ['ctx'] });
  });

  test('head, index and tail use msg.parts', async () => {
    for (let i = 0; i < 4; i++) receive('parts', { _msgid: `part${i}`, payload: i, parts: { id: 'g', index: i, count: 4 } });
    await t.capture.waitFor('parts-3');
    await settle();
    assert.deepEqual(routes('parts', 3), { 1: ['part0'], 2: ['part1', 'part2'], 3: ['part3'] });
  });

  test('JSONata property and expression rules keep message order', async () => {
    receive('expr', { _msgid: 'e1', payload: { a: 1, b: 2 } });
    receive('expr', { _msgid: 'e2', payload: { a: 2, b: 1 } });
    receive('expr', { _msgid: 'e3', payload: { a: 1, b: 5 } });
    await t.capture.waitFor('expr-2', 2);
    await t.capture.waitFor('expr-1', 2);
    await settle();
    assert.deepEqual(routes('expr', 2), { 1: ['e1', 'e2'], 2: ['e1', 'e3'] });
  });

  test('repair gives each output its own sequence in msg.parts', async () => {
    for (let i = 0; i < 4; i++) receive('repair', { _msgid: `r${i}`, payload: i, parts: { id: 'grp', index: i, count: 4, type: 'array', len: 1 } });
    await t.capture.waitFor('repair-1', 2);
    await t.capture.waitFor('repair-2', 2);
    const [big, small] = [t.capture.of('repair-1'), t.capture.of('repair-2')];
    assert.deepEqual(big.map((m) => [m.payload, m.parts.index, m.parts.count, m.parts.type, m.parts.len]), [[2, 0, 2, 'array', 1], [3, 1, 2, 'array', 1]]);
    assert.deepEqual(small.map((m) => [m.payload, m.parts.index, m.parts.count]), [[0, 0, 2], [1, 1, 2]]);
    assert.equal(big[0].parts.id, big[1].parts.id);
    assert.notEqual(big[0].parts.id, small[0].parts.id);
    assert.notEqual(big[0].parts.id, 'grp');
  });

  test('tail waits for the group when only the last message carries parts.count', async () => {
    for (let i = 0; i < 3; i++) receive('tail', { _msgid: `t${i}`, payload: i, parts: i === 2 ? { id: 'g2', index: i, count: 3 } : { id: 'g2', index: i } });
    await t.capture.waitFor('tail-1', 2);
    await settle();
    assert.deepEqual(t.capture.of('tail-1').map((m) => [m._msgid, m.parts.count]), [['t1', 3], ['t2', 3]]);
  });

  test('a failing JSONata property only warns; a failing JSONata rule is an error with Node-RED\'s text', async () => {
    receive('bad-prop', { _msgid: 'bp', payload: 1 });
    receive('bad-rule', { _msgid: 'br', payload: 1 });
    const [caught] = await t.capture.waitFor('cap-catch');
    await settle();
    assert.equal(t.capture.of('cap-catch').length, 1);
    assert.equal(caught._msgid, 'br');
    assert.equal(caught.error.message, 'Invalid JSONata expression: bang');
    assert.ok(t.server.logs.some((l) => l.includes('Invalid JSONata expression: boom')));
    assert.equal(t.capture.of('bad-prop-1').length + t.capture.of('bad-rule-1').length, 0);
  });
});
