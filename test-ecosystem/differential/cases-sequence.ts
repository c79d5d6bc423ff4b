/** split, join, sort, batch, rbe and the rate-limiting delay: message sequences and msg.parts. */
import { joinAuto } from './cases-change-switch.js';
import type { DiffCase } from './harness.js';

const split = (extra: Record<string, unknown> = {}) =>
  ({ splt: '\\n', spltType: 'str', arraySplt: 1, arraySpltType: 'len', stream: false, addname: '', property: 'payload', ...extra });
const join = (extra: Record<string, unknown>) => ({ ...joinAuto(), mode: 'custom', ...extra });

export const splitJoinCases: DiffCase[] = [
  {
    name: 'split-join-array', about: 'split an array and rebuild it with join in auto mode',
    build: (k) => [k.node('start', 'split', split(), 'j'), k.node('j', 'join', joinAuto(), 'out')],
    requests: [{ msg: { payload: [1, 'two', { three: 3 }], topic: 't' } }],
  },
  {
    name: 'split-string', about: 'split a string on a separator: every part with msg.parts', collect: 3,
    build: (k) => [k.node('start', 'split', split({ splt: ',' }), 'out')],
    requests: [{ msg: { payload: 'a,b,c' } }],
  },
  {
    name: 'split-object-addname', about: 'split an object, each key copied to msg.topic', collect: 2,
    build: (k) => [k.node('start', 'split', split({ addname: 'topic' }), 'out')],
    requests: [{ msg: { payload: { x: 1, y: [2] } } }],
  },
  {
    name: 'split-array-chunks', about: 'split an array into fixed-length chunks', collect: 3,
    build: (k) => [k.node('start', 'split', split({ arraySplt: 2 }), 'out')],
    requests: [{ msg: { payload: [1, 2, 3, 4, 5] } }],
  },
  {
    name: 'split-join-string-auto', about: 'auto join of a split string restores the string with its separator',
    build: (k) => [k.node('start', 'split', split({ splt: '-' }), 'j'), k.node('j', 'join', joinAuto(), 'out')],
    requests: [{ msg: { payload: 'x-y-z' } }],
  },
  {
    name: 'split-join-object-auto', about: 'auto join of a split object restores the object',
    build: (k) => [k.node('start', 'split', split(), 'j'), k.node('j', 'join', joinAuto(), 'out')],
    requests: [{ msg: { payload: { a: 1, b: 'two' } } }],
  },
  {
    name: 'join-manual-array', about: 'manual join of a count of separate messages into an array',
    build: (k) => [k.fan('start', 'j'), k.node('j', 'join', join({ build: 'array', count: '3' }), 'out')],
    requests: [{ msg: { payload: ['a', 'b', 'c'] } }],
  },
  {
    name: 'join-manual-object', about: 'manual join into an object keyed by msg.topic',
    build: (k) => [
      k.fn('start', `for (const [topic, payload] of Object.entries(msg.payload)) node.send({ ...RED.util.cloneMessage(msg), topic, payload });
return null;`, 'j'),
      k.node('j', 'join', join({ build: 'object', key: 'topic', count: '2' }), 'out'),
    ],
    requests: [{ msg: { payload: { k1: 'v1', k2: ['v2'] } } }],
  },
  {
    name: 'join-manual-string', about: 'manual join into a string with a joiner',
    build: (k) => [k.fan('start', 'j'), k.node('j', 'join', join({ build: 'string', joiner: ', ', count: '3' }), 'out')],
    requests: [{ msg: { payload: ['a', 2, true] } }],
  },
  {
    name: 'join-merged', about: 'manual join merging payload objects, later keys winning',
    build: (k) => [k.fan('start', 'j'), k.node('j', 'join', join({ build: 'merged', count: '2' }), 'out')],
    requests: [{ msg: { payload: [{ a: 1, b: 1 }, { b: 2, c: 3 }] } }],
  },
  {
    name: 'join-complete', about: 'msg.complete ends a manual join early',
    build: (k) => [
      k.fn('start', `node.send({ ...RED.util.cloneMessage(msg), payload: 'p1' });
node.send({ ...RED.util.cloneMessage(msg), payload: 'p2', complete: true });
return null;`, 'j'),
      k.node('j', 'join', join({ build: 'array', count: '10' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'join-reduce', about: 'reduce a split sequence with JSONata, with a fixup expression',
    build: (k) => [
      k.node('start', 'split', split(), 'j'),
      k.node('j', 'join', { ...joinAuto(), mode: 'reduce', reduceRight: false, reduceExp: '$A + payload', reduceInit: '0', reduceInitType: 'num', reduceFixup: '$A / $N' }, 'out'),
    ],
    requests: [{ msg: { payload: [2, 4, 6, 8] } }],
  },
];

const sort = (extra: Record<string, unknown>) => ({
  order: 'ascending', as_num: false, target: 'payload', targetType: 'msg', msgKey: 'payload', msgKeyType: 'elem', seqKey: 'payload', seqKeyType: 'msg', ...extra,
});

export const sortBatchCases: DiffCase[] = [
  {
    name: 'sort-array', about: 'sort an array in msg.payload, as numbers and as strings', collect: 2,
    build: (k) => [
      k.fn('start', 'return [msg, RED.util.cloneMessage(msg)];', 's1', 's2'),
      k.node('s1', 'sort', sort({ as_num: true }), 'out'),
      k.node('s2', 'sort', sort({ order: 'descending' }), 'out'),
    ],
    requests: [{ msg: { payload: ['10', '9', '100', '1'] } }],
  },
  {
    name: 'sort-array-jsonata', about: 'sort array elements by a JSONata key',
    build: (k) => [k.node('start', 'sort', sort({ msgKey: 'n', msgKeyType: 'jsonata' }), 'out')],
    requests: [{ msg: { payload: [{ n: 3 }, { n: 1 }, { n: 2 }] } }],
  },
  {
    name: 'sort-sequence', about: 'sort a message sequence descending by payload, then join it',
    build: (k) => [
      k.node('start', 'split', split(), 's'),
      k.node('s', 'sort', sort({ target: '', targetType: 'seq', order: 'descending', as_num: true }), 'j'),
      k.node('j', 'join', joinAuto(), 'out'),
    ],
    requests: [{ msg: { payload: [3, 11, 2, 7] } }],
  },
  {
    name: 'batch-count', about: 'batch by count: groups of two become sequences with msg.parts', collect: 4,
    build: (k) => [
      k.fan('start', 'b'),
      k.node('b', 'batch', { mode: 'count', count: 2, overlap: 0, interval: 10, allowEmptySequence: false, topics: [{ topic: '' }] }, 'out'),
    ],
    requests: [{ msg: { payload: ['a', 'b', 'c', 'd'] } }],
  },
  {
    name: 'batch-overlap', about: 'batch by count with overlap', collect: 6,
    build: (k) => [
      k.fan('start', 'b'),
      k.node('b', 'batch', { mode: 'count', count: 3, overlap: 1, interval: 10, allowEmptySequence: false, topics: [{ topic: '' }] }, 'out'),
    ],
    requests: [{ msg: { payload: [1, 2, 3, 4, 5] } }],
  },
];

const rbe = (extra: Record<string, unknown>) => ({ func: 'rbe', gap: '', start: '', inout: 'out', septopics: true, property: 'payload', topi: 'topic', ...extra });

/**
 * Values through a filter node, then a sentinel around it (a filter may drop anything, and equal
 * path lengths keep the sentinel behind the values it follows).
 */
function filterCase(name: string, about: string, props: Record<string, unknown>, values: unknown[]): DiffCase {
  return {
    name, about, collect: 'last',
    build: (k) => [
      k.fn('start', `for (const p of msg.payload) node.send([{ ...RED.util.cloneMessage(msg), payload: p, topic: 'data' }, null]);
node.send([null, { ...RED.util.cloneMessage(msg), payload: 'END', last: true }]);
return null;`, 'f', 'end'),
      k.node('f', 'rbe', props, 'out'),
      k.mark('end', 'sentinel', 'out'),
    ],
    requests: [{ msg: { payload: values } }],
  };
}

export const filterDelayCases: DiffCase[] = [
  filterCase('rbe-block-unless-changed', 'rbe passes only changed values, objects compared deeply', rbe({}), [1, 1, 2, 2, 1, { a: 1 }, { a: 1 }, { a: 2 }]),
  filterCase('rbe-ignore-initial', 'rbei also blocks the first value', rbe({ func: 'rbei' }), [1, 1, 2]),
  filterCase('rbe-deadband', 'deadband: passes when the change exceeds the gap compared to the last output', rbe({ func: 'deadband', gap: '2' }), [10, 11, 13, 14, 10, 'x']),
  filterCase('rbe-narrowband-percent', 'narrowband with a percentage gap and a start value', rbe({ func: 'narrowband', gap: '10%', start: '100' }), [100, 105, 120, 95, 111]),
  {
    name: 'delay-rate-drop', about: 'rate limit dropping intermediate messages: the first of a burst passes at once', collect: 1,
    build: (k) => [
      k.fan('start', 'd'),
      k.node('d', 'delay', {
        pauseType: 'rate', timeout: '5', timeoutUnits: 'seconds', rate: '1', nbRateUnits: '1', rateUnits: 'second',
        randomFirst: '1', randomLast: '5', randomUnits: 'seconds', drop: true, allowrate: false, outputs: 1,
      }, 'out'),
    ],
    requests: [{ msg: { payload: [1, 2, 3] } }],
  },
];
