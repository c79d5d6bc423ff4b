/** change and switch: typed values, context, JSONata, every switch rule type. */
import type { DiffCase } from './harness.js';

const set = (p: string, to: string, tot: string, pt = 'msg') => ({ t: 'set', p, pt, to, tot });
const rule = (t: string, v?: string, vt?: string, extra: Record<string, unknown> = {}) => ({ t, ...(v === undefined ? {} : { v, vt }), ...extra });

export const changeCases: DiffCase[] = [
  {
    name: 'change-set-types',
    about: 'set with every static typed value (str, num, bool, json, bin, env, msg)',
    build: (k) => [k.change('start', [
      set('payload.str', 'hello', 'str'),
      set('payload.num', '42.5', 'num'),
      set('payload.bool', 'true', 'bool'),
      set('payload.json', '{"a":[1,2,{"b":null}]}', 'json'),
      set('payload.bin', '[1,2,255]', 'bin'),
      set('payload.env', 'DIFF_NAME', 'env'),
      set('topic', 'payload.src', 'msg'),
    ], 'out')],
    requests: [{ msg: { payload: { src: 'from-msg' } } }],
  },
  {
    name: 'change-jsonata',
    about: 'set from JSONata reading msg, $flowContext and $env',
    build: (k) => [
      k.change('start', [
        set('flag', 'on', 'str', 'flow'),
        set('total', '$sum(payload)', 'jsonata'),
        set('label', 'topic & "-" & $string($count(payload))', 'jsonata'),
        set('ctx', '$flowContext("flag")', 'jsonata'),
        set('env', '$env("DIFF_NAME")', 'jsonata'),
        set('obj', '{"max": $max(payload), "even": payload[$ % 2 = 0]}', 'jsonata'),
      ], 'out'),
    ],
    requests: [{ msg: { payload: [1, 2, 3, 4], topic: 't' } }],
  },
  {
    name: 'change-change',
    about: 'change: plain string (every occurrence), regex with groups, number and boolean matches',
    build: (k) => [k.change('start', [
      { t: 'change', p: 'payload.s', pt: 'msg', from: 'a', fromt: 'str', to: 'X', tot: 'str' },
      { t: 'change', p: 'payload.r', pt: 'msg', from: '(\\w+)@(\\w+)', fromt: 're', to: '$2 at $1', tot: 'str' },
      { t: 'change', p: 'payload.n', pt: 'msg', from: '5', fromt: 'num', to: 'five', tot: 'str' },
      { t: 'change', p: 'payload.b', pt: 'msg', from: 'true', fromt: 'bool', to: '1', tot: 'num' },
      { t: 'change', p: 'payload.m', pt: 'msg', from: '.', fromt: 'str', to: '!', tot: 'str' },
    ], 'out')],
    requests: [{ msg: { payload: { s: 'banana', r: 'me@home you@work', n: 5, b: true, m: 'a.b.c' } } }],
  },
  {
    name: 'change-delete-move',
    about: 'delete and move, including moving into a deep path that does not exist yet',
    build: (k) => [k.change('start', [
      { t: 'delete', p: 'payload.a', pt: 'msg' },
      { t: 'move', p: 'payload.b', pt: 'msg', to: 'topic', tot: 'msg' },
      { t: 'move', p: 'payload.c', pt: 'msg', to: 'payload.d.e[1]', tot: 'msg' },
      set('payload.x.y[0].z', 'deep', 'str'),
    ], 'out')],
    requests: [{ msg: { payload: { a: 1, b: 'bee', c: { keep: true } } } }],
  },
  {
    name: 'change-context',
    about: 'flow and global context written by one rule and read by later ones across requests',
    build: (k) => [k.change('start', [
      set('last', 'payload', 'msg', 'flow'),
      set('shared', 'count', 'msg', 'global'),
      set('payload', '{}', 'json'),
      set('payload.fromFlow', 'last', 'flow'),
      set('payload.fromGlobal', 'shared', 'global'),
      set('payload.prev', '$flowContext("last") & "!"', 'jsonata'),
    ], 'out')],
    requests: [{ msg: { payload: 'one', count: 1 } }, { msg: { payload: 'two', count: 2 } }],
  },
  {
    name: 'change-copy-dc',
    about: 'set from msg with and without deep copy, then mutate the source',
    build: (k) => [k.change('start', [
      { t: 'set', p: 'ref', pt: 'msg', to: 'payload', tot: 'msg' },
      { t: 'set', p: 'copy', pt: 'msg', to: 'payload', tot: 'msg', dc: true },
      set('payload.v', 'changed', 'str'),
    ], 'out')],
    requests: [{ msg: { payload: { v: 'orig' } } }],
  },
];

/**
 * Switch rules whose outputs each mark msg.port; `fan` sends the values one by one. The final value
 * must leave by exactly one output, since its copies all carry `last`.
 */
function switchCase(name: string, about: string, props: Record<string, unknown>, rules: Record<string, unknown>[], values: unknown[]): DiffCase {
  return {
    name,
    about,
    collect: 'last',
    build: (k) => [
      k.fan('start', 'sw'),
      k.node('sw', 'switch', { property: 'payload', propertyType: 'msg', checkall: 'true', repair: false, outputs: rules.length, ...props, rules },
        ...rules.map((_, i) => `m${i}`)),
      ...rules.map((_, i) => k.mark(`m${i}`, i + 1, 'out')),
    ],
    requests: [{ msg: { payload: values, limit: 10 } }],
  };
}

export const switchCases: DiffCase[] = [
  switchCase('switch-first-match', 'checkall false: the first matching rule wins, else catches the rest',
    { checkall: 'false' },
    [rule('eq', '5', 'num'), rule('lt', '4', 'num'), rule('regex', '^ab', 'str', { case: false }), rule('null'), rule('true'),
      rule('empty'), rule('cont', 'world', 'str'), rule('hask', 'a', 'str'), rule('else')],
    [5, 3, 'abc', null, true, [], 'hello world', { a: 1 }, 'zzz', 7]),
  switchCase('switch-checkall', 'checkall true: every matching rule sends, else only when none did',
    {},
    [rule('eq', '5', 'num'), rule('gte', '5', 'num'), rule('btwn', '1', 'num', { v2: '10', v2t: 'num' }), rule('istype', 'number', 'number'),
      rule('neq', 'x', 'str'), rule('lte', 'limit', 'msg'), rule('else')],
    [5, 12, 'x']),
  switchCase('switch-types', 'istype for every type, regex ignoring case, nempty, false, nnull',
    {},
    [rule('istype', 'string', 'string'), rule('istype', 'array', 'array'), rule('istype', 'object', 'object'), rule('istype', 'boolean', 'boolean'),
      rule('istype', 'null', 'null'), rule('istype', 'json', 'json'), rule('regex', 'HELLO', 'str', { case: true }), rule('nempty'),
      rule('false'), rule('nnull'), rule('else')],
    ['hello', '{"a":1}', [1], {}, false, null, '', 7]),
  switchCase('switch-jsonata-context', 'JSONata rule, rule values from flow context, env and ${ENV} in a rule value',
    { property: 'payload.n', propertyType: 'msg' },
    [rule('jsonata_exp', 'payload.n > 2 and payload.tag = "t"', 'jsonata'), rule('eq', 'DIFF_NUM', 'env'), rule('eq', '${DIFF_NUM}', 'num'),
      rule('lt', 'limit', 'msg'), rule('else')],
    [{ n: 3, tag: 't' }, { n: 42 }, { n: 1 }, { n: 50 }]),
  switchCase('switch-property-types', 'switch on a JSONata property and on a flow property',
    { property: '$count(payload)', propertyType: 'jsonata' },
    [rule('gt', '2', 'num'), rule('eq', '1', 'num'), rule('else')],
    [[1, 2, 3], [1], []]),
  {
    name: 'switch-repair',
    about: 'repair re-numbers msg.parts of the messages each output sends, so join auto rebuilds them',
    collect: 2,
    build: (k) => [
      k.node('start', 'split', { splt: '\\n', spltType: 'str', arraySplt: 1, arraySpltType: 'len', stream: false, addname: '', property: 'payload' }, 'sw'),
      k.node('sw', 'switch', { property: 'payload', propertyType: 'msg', rules: [rule('gt', '2', 'num'), rule('else')], checkall: 'true', repair: true, outputs: 2 }, 'j1', 'j2'),
      k.node('j1', 'join', joinAuto(), 'm1'),
      k.node('j2', 'join', joinAuto(), 'm2'),
      k.mark('m1', 1, 'out'),
      k.mark('m2', 2, 'out'),
    ],
    requests: [{ msg: { payload: [1, 5, 2, 6, 3] } }],
  },
];

export function joinAuto(): Record<string, unknown> {
  return { mode: 'auto', build: 'object', property: 'payload', propertyType: 'msg', key: 'topic', joiner: '\\n', joinerType: 'str', useparts: false, accumulate: 'false', timeout: '', count: '', reduceRight: false };
}
