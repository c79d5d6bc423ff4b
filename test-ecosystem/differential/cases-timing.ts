/**
 * Timers: trigger, delay, batch by interval and join timeouts. Answers compare content and order
 * only: each case spaces its events 40 ms or more apart from any deadline that decides the order,
 * and where a behaviour shows only in *when* something happens, a `marker` message sent straight to
 * the answer at a fixed time turns that into an order.
 */
import { joinAuto } from './cases-change-switch.js';
import type { DiffCase, Kit } from './harness.js';
import type { FlowNode } from '../../bench/flows.js';

/** One message the scripted start node sends: `props` over a copy of the request message. */
interface Step {
  /** Milliseconds after the request; 0 sends at once, in step order. */
  at?: number;
  props: Record<string, unknown>;
  /** A message of only these properties (no req/res), as a control message from elsewhere. */
  bare?: boolean;
  /** 1: straight to the answer, bypassing the nodes under test. */
  port?: 0 | 1;
}

/** The entry node: sends each step at its time, port 0 to `first`, port 1 to the answer. */
function script(k: Kit, steps: Step[], first: string): FlowNode {
  const code = `const steps = ${JSON.stringify(steps)};
for (const s of steps) {
  const m = s.bare ? s.props : Object.assign(RED.util.cloneMessage(msg), s.props);
  const out = [null, null];
  out[s.port || 0] = m;
  if (s.at) setTimeout(() => node.send(out), s.at); else node.send(out);
}
return null;`;
  return k.fn('start', code, first, 'out');
}

const at = (ms: number, props: Record<string, unknown>, extra: Partial<Step> = {}): Step => ({ at: ms, props, ...extra });
const marker = (ms: number): Step => ({ at: ms, props: { payload: 'marker' }, port: 1 });

/** Node-RED's trigger defaults, as the editor writes them. */
const trigger = (extra: Record<string, unknown>) => ({
  op1: '1', op2: '0', op1type: 'str', op2type: 'str', duration: '150', extend: false, overrideDelay: false,
  units: 'ms', reset: '', bytopic: 'all', topic: 'topic', outputs: 1, ...extra,
});

export const triggerCases: DiffCase[] = [
  {
    name: 'trigger-send-wait', about: 'trigger sends op1, ignores messages while waiting, then op2 on the first message', collect: 2,
    build: (k) => [script(k, [at(0, { payload: 'a', n: 1 }), at(0, { payload: 'b', n: 2 })], 't'), k.node('t', 'trigger', trigger({}), 'out')],
    requests: [{ msg: { topic: 'x' } }, { msg: { topic: 'y' } }],
  },
  {
    name: 'trigger-extend', about: 'extend restarts the wait; op2 leaves with the latest message, the original payload', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a', n: 1 }), at(40, { payload: 'b', n: 2 }), at(80, { payload: 'c', n: 3 })], 't'),
      k.node('t', 'trigger', trigger({ op1: 'hi', duration: '200', extend: true, op2type: 'pay' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-resend', about: 'resend op1 every interval until reset', collect: 3,
    build: (k) => [
      script(k, [at(0, { payload: 'go' })], 't'),
      k.node('t', 'trigger', trigger({ duration: '-50', op1: '{"tick":true}', op1type: 'json' }), 'stop'),
      k.fn('stop', `const n = (context.get('n') || 0) + 1;
context.set('n', n % 3);
return n === 3 ? [msg, { reset: true }] : [msg, null];`, 'out', 't'),
    ],
    requests: [{ msg: {} }, { msg: {} }],
  },
  {
    name: 'trigger-typed-second-output', about: 'op1 a number, op2 JSON on the second output', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a' })], 't'),
      k.node('t', 'trigger', trigger({ op1: '5', op1type: 'num', op2: '{"x":[1]}', op2type: 'json', duration: '60', outputs: 2 }), 'm1', 'm2'),
      k.mark('m1', 1, 'out'), k.mark('m2', 2, 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-typed-values', about: 'op1 bytes, op2 a mustache template of the first message', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'first', topic: 't1' }), at(0, { payload: 'second', topic: 't2' })], 't'),
      k.node('t', 'trigger', trigger({ op1: '[104,105]', op1type: 'bin', op2: '{{payload}} on {{topic}}', op2type: 'str', duration: '60' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-bool-then-nothing', about: 'op1 a boolean, then nothing: a second cycle starts once the wait ends', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(150, { payload: 'b' })], 't'),
      k.node('t', 'trigger', trigger({ op1: 'true', op1type: 'bool', op2type: 'nul', duration: '60' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-original-latest', about: 'op1 the existing message, op2 the latest message', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a', n: 1 }), at(40, { payload: 'b', n: 2 })], 't'),
      k.node('t', 'trigger', trigger({ op1type: 'pay', op2type: 'payl', duration: '150' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-reset', about: 'msg.reset and the reset payload end the wait without op2', collect: 4,
    build: (k) => [
      script(k, [
        at(0, { payload: 'a' }), at(40, { reset: true }), at(80, { payload: 'b' }), at(120, { payload: 'stop' }),
        at(160, { payload: 'c' }),
      ], 't'),
      k.node('t', 'trigger', trigger({ op1type: 'pay', duration: '200', reset: 'stop' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-override-delay', about: 'msg.delay (ms) overrides the duration for that message', collect: 3,
    build: (k) => [
      script(k, [at(0, { payload: 'a', delay: 40 }), marker(250)], 't'),
      k.node('t', 'trigger', trigger({ duration: '2', units: 's', overrideDelay: true }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-override-delay-extend', about: 'a message without msg.delay extends by the configured duration, not an earlier msg.delay', collect: 3,
    build: (k) => [
      script(k, [at(0, { payload: 'a', delay: 500 }), at(40, { payload: 'b' }), marker(260)], 't'),
      k.node('t', 'trigger', trigger({ duration: '60', extend: true, overrideDelay: true }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'trigger-by-topic', about: 'per topic each topic has its own wait; all messages share one', collect: 6,
    build: (k) => [
      script(k, [at(0, { payload: 'a', topic: 't1' }), at(0, { payload: 'b', topic: 't2' }), at(0, { payload: 'c', topic: 't1' })], 'f'),
      k.fn('f', 'return [msg, RED.util.cloneMessage(msg)];', 'per', 'all'),
      k.node('per', 'trigger', trigger({ bytopic: 'topic', op1type: 'pay', op2: '{{topic}} done', duration: '80' }), 'm1'),
      k.node('all', 'trigger', trigger({ op1type: 'pay', op2: '{{topic}} done', duration: '200' }), 'm2'),
      k.mark('m1', 'topic', 'out'), k.mark('m2', 'all', 'out'),
    ],
    requests: [{ msg: {} }],
  },
];

/** Node-RED's delay defaults, as the editor writes them. */
const delay = (extra: Record<string, unknown>) => ({
  pauseType: 'delay', timeout: '5', timeoutUnits: 'seconds', rate: '1', nbRateUnits: '1', rateUnits: 'second',
  randomFirst: '1', randomLast: '5', randomUnits: 'seconds', drop: false, allowrate: false, outputs: 1, ...extra,
});

export const delayTimingCases: DiffCase[] = [
  {
    name: 'delay-fixed', about: 'a fixed delay keeps arrival order', collect: 3,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(0, { payload: 'b' }), at(20, { payload: 'c' })], 'd'),
      k.node('d', 'delay', delay({ timeout: '50', timeoutUnits: 'milliseconds' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-random', about: 'a random delay between bounds passes the message unchanged', collect: 1,
    build: (k) => [script(k, [at(0, { payload: { v: 1 } })], 'd'), k.node('d', 'delay', delay({ pauseType: 'random', randomFirst: '10', randomLast: '40', randomUnits: 'milliseconds' }), 'out')],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-msg-delay', about: 'msg.delay (ms) sets each message\'s own delay, reordering them', collect: 3,
    build: (k) => [
      script(k, [at(0, { payload: 'slow', delay: 150 }), at(0, { payload: 'fast', delay: 10 }), at(0, { payload: 'default' })], 'd'),
      k.node('d', 'delay', delay({ pauseType: 'delayv', timeout: '80', timeoutUnits: 'milliseconds' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-fixed-reset', about: 'msg.reset discards what a fixed delay holds', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(20, { reset: true }, { bare: true }), at(40, { payload: 'b' }), marker(300)], 'd'),
      k.node('d', 'delay', delay({ timeout: '100', timeoutUnits: 'milliseconds' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-fixed-flush', about: 'msg.flush releases held messages now (a count releases the oldest)', collect: 4,
    build: (k) => [
      script(k, [
        at(0, { payload: 'a' }), at(0, { payload: 'b' }), at(0, { payload: 'c' }), at(30, { flush: 2 }, { bare: true }), marker(150),
        at(200, { flush: true }, { bare: true }),
      ], 'd'),
      k.node('d', 'delay', delay({ timeout: '5', timeoutUnits: 'seconds' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-rate-queue', about: 'rate limit queueing all messages: all pass in order, msg.toFront jumps the queue', collect: 4,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(0, { payload: 'b' }), at(0, { payload: 'c' }), at(0, { payload: 'd', toFront: true })], 'd'),
      k.node('d', 'delay', delay({ pauseType: 'rate', rate: '20', rateUnits: 'second' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-rate-flush', about: 'msg.flush sends queued messages now, a count only the oldest', collect: 5,
    build: (k) => [
      script(k, [
        at(0, { payload: 'a' }), at(0, { payload: 'b' }), at(0, { payload: 'c' }), at(0, { payload: 'd' }), at(30, { flush: 1 }, { bare: true }),
        marker(200), at(250, { flush: true }, { bare: true }),
      ], 'd'),
      k.node('d', 'delay', delay({ pauseType: 'rate', rate: '1', nbRateUnits: '5', rateUnits: 'second' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-rate-reset', about: 'msg.reset empties the queue and the next message passes at once', collect: 3,
    build: (k) => [
      script(k, [
        at(0, { payload: 'a' }), at(0, { payload: 'b' }), at(30, { reset: true }, { bare: true }), at(60, { payload: 'c' }), marker(200),
      ], 'd'),
      k.node('d', 'delay', delay({ pauseType: 'rate', rate: '1', nbRateUnits: '2', rateUnits: 'second' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-rate-drop-second', about: 'rate limit dropping intermediate messages onto the second output', collect: 3,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(0, { payload: 'b' }), at(0, { payload: 'c' })], 'd'),
      k.node('d', 'delay', delay({ pauseType: 'rate', rate: '1', nbRateUnits: '5', rateUnits: 'second', drop: true, outputs: 2 }), 'm1', 'm2'),
      k.mark('m1', 1, 'out'), k.mark('m2', 2, 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-topic-queue', about: 'per topic: a newer message replaces its topic\'s queued one, topics take turns', collect: 4,
    build: (k) => [
      script(k, [
        at(0, { payload: 'a', topic: 't1' }), at(0, { payload: 'b', topic: 't2' }), at(0, { payload: 'c', topic: 't1' }), at(0, { payload: 'd' }),
      ], 'd'),
      k.node('d', 'delay', delay({ pauseType: 'queue', rate: '20', rateUnits: 'second', outputs: 2 }), 'm1', 'm2'),
      k.mark('m1', 1, 'out'), k.mark('m2', 2, 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'delay-topic-timed', about: 'per topic, all topics at once: the latest of each topic leaves together', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a', topic: 't1' }), at(0, { payload: 'b', topic: 't2' }), at(0, { payload: 'c', topic: 't1' })], 'd'),
      k.node('d', 'delay', delay({ pauseType: 'timed', rate: '20', rateUnits: 'second' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
];

const batchInterval = (extra: Record<string, unknown>) =>
  ({ mode: 'interval', count: 10, overlap: 0, interval: '0.2', allowEmptySequence: false, honourParts: false, topics: [{ topic: '' }], ...extra });

/**
 * Passes the first two messages from the one carrying a request's req/res on, lending it to the
 * empty sequences (which have none); drops the empty sequences before and after.
 */
const GATE = `let held = context.get('held');
if (msg.req) held = { req: msg.req, res: msg.res, n: 0 };
if (!held) return null;
held.n++;
context.set('held', held.n >= 2 ? undefined : held);
msg.req = held.req;
msg.res = held.res;
return msg;`;

export const batchTimingCases: DiffCase[] = [
  {
    name: 'batch-interval', about: 'batch by interval: what arrived in one interval becomes one sequence', collect: 2,
    build: (k) => [
      script(k, [at(0, { reset: true }), at(0, { payload: 'a' }), at(0, { payload: 'b' })], 'b'),
      k.node('b', 'batch', batchInterval({}), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'batch-interval-empty', about: 'batch by interval sends an empty sequence { payload: null } for an empty interval', collect: 2,
    build: (k) => [
      script(k, [at(0, { reset: true }), at(0, { payload: 'a' })], 'b'),
      k.node('b', 'batch', batchInterval({ interval: '0.15', allowEmptySequence: true }), 'g'),
      k.fn('g', GATE, 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'batch-count-honour-parts', about: 'batch by count honouring msg.parts ends a batch with its sequence', collect: 3,
    build: (k) => [
      k.node('start', 'split', { splt: '\\n', spltType: 'str', arraySplt: 1, arraySpltType: 'len', stream: false, addname: '', property: 'payload' }, 'b'),
      k.node('b', 'batch', { mode: 'count', count: 2, overlap: 0, interval: 10, allowEmptySequence: false, honourParts: true, topics: [{ topic: '' }] }, 'out'),
    ],
    requests: [{ msg: { payload: [1, 2, 3] } }],
  },
];

const join = (extra: Record<string, unknown>) => ({ ...joinAuto(), mode: 'custom', build: 'array', ...extra });

export const joinTimingCases: DiffCase[] = [
  {
    name: 'join-timeout', about: 'a manual join sends what it has when its timeout expires', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(0, { payload: 'b' }), marker(40)], 'j'),
      k.node('j', 'join', join({ count: '10', timeout: '0.1' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'join-timeout-complete', about: 'msg.complete sends before the timeout; the next group has its own timeout', collect: 3,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(0, { payload: 'b' }), at(30, { complete: true }), at(60, { payload: 'c' }), marker(110)], 'j'),
      k.node('j', 'join', join({ count: '', timeout: '0.15' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'join-timeout-reset', about: 'msg.reset drops the group and its timer', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(20, { reset: true }), at(40, { payload: 'b' }), marker(100)], 'j'),
      k.node('j', 'join', join({ count: '', timeout: '0.15' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'join-restart-timeout', about: 'msg.restartTimeout starts the group\'s timeout again', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: 'a' }), at(100, { payload: 'b', restartTimeout: true }), marker(350)], 'j'),
      k.node('j', 'join', join({ count: '', timeout: '0.3' }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'join-ignores-parts', about: 'a manual join without "use msg.parts" ignores a split\'s parts: only the timeout ends it', collect: 2,
    build: (k) => [
      script(k, [at(0, { payload: [1, 2, 3] }), marker(60)], 's'),
      k.node('s', 'split', { splt: '\\n', spltType: 'str', arraySplt: 1, arraySpltType: 'len', stream: false, addname: '', property: 'payload' }, 'j'),
      k.node('j', 'join', join({ count: '', timeout: '0.15', useparts: false }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
  {
    name: 'join-parts-ids', about: 'a manual join using msg.parts with no count keeps each parts.id its own group', collect: 2,
    build: (k) => [
      script(k, [
        at(0, { payload: 'x0', parts: { id: 'x', index: 0, count: 2 } }), at(0, { payload: 'y0', parts: { id: 'y', index: 0, count: 2 } }),
        at(0, { payload: 'x1', parts: { id: 'x', index: 1, count: 2 } }), at(0, { payload: 'y1', parts: { id: 'y', index: 1, count: 2 } }),
      ], 'j'),
      k.node('j', 'join', join({ count: '', useparts: true }), 'out'),
    ],
    requests: [{ msg: {} }],
  },
];
