/**
 * The trigger node: on a message it sends op1 at once, then op2 after `duration` unless reset
 * (per topic with `bytopic: "topic"`). Duration 0 waits for a reset; a negative duration repeats
 * op1 every |duration|. `extend` restarts the wait on each message; `overrideDelay` takes the wait
 * from msg.delay (ms). With two outputs op2 leaves on the second.
 *
 * Messages are handled one at a time, in order: values read from an asynchronous context store
 * arrive by callback, and the next message waits for them. Constant values never wait.
 */
import type Mustache from 'mustache';
import { lazy } from '../base/lazy.js';

const mustache = lazy<typeof Mustache>('mustache');
import { timerDelay, toMillis } from './lib/timing-units.js';
import type { Held } from './lib/held.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

type Timer = ReturnType<typeof setTimeout>;

interface Pending {
  /** undefined: idle; null: waiting for a reset (duration 0). */
  timer: Timer | null | undefined;
  /** The second message's payload, fixed when the trigger fires. */
  m2?: unknown;
  /** The latest message, for op2type "payl". */
  latest?: Msg;
}

interface Operand {
  value: unknown;
  type: string;
  templated: boolean;
}

type Callback = (err: Error | null, value?: unknown) => void;

const CONSTANT = new Set(['str', 'num', 'bool', 'null']);
const ASYNC = new Set(['flow', 'global', 'jsonata']);
/** Operands read again when op2 is sent, so it carries the value of that moment. */
const REREAD = new Set(['flow', 'global', 'date']);
/** After an extended wait only context values are read again (Node-RED keeps the first date). */
const REREAD_EXTENDED = new Set(['flow', 'global']);

/** Node-RED 0.x stored booleans and null as type "val". */
function operand(rawValue: unknown, rawType: unknown, fallback: string): Operand {
  let value: unknown = rawValue === undefined || rawValue === '' ? fallback : rawValue;
  let type = typeof rawType === 'string' && rawType ? rawType : 'str';
  // The editor's default value means "now" for a date (a format otherwise).
  if (type === 'date' && value === fallback) value = '';
  if (type === 'val') {
    if (value === 'true' || value === 'false') type = 'bool';
    else if (value === 'null') {
      type = 'null';
      value = null;
    } else type = 'str';
  }
  const templated = type === 'str' && String(value).includes('{{');
  if (type === 'num' && !Number.isNaN(Number(value))) value = Number(value);
  else if (type === 'bool') value = value === true || /^true$/i.test(String(value));
  return { value, type, templated };
}

export default function (RED: RedApi) {
  class TriggerNode extends RED.nodes.Node {
    bytopic: string;
    topicProperty: string;
    duration: number;
    loop: boolean;
    extend: boolean;
    overrideDelay: boolean;
    reset: string;
    secondOutput: boolean;
    private readonly op1: Operand;
    private readonly op2: Operand;
    private readonly topics = new Map<string, Pending>();
    private readonly queue: Held[] = [];
    private busy = false;

    constructor(config: NodeConfig) {
      super(config);
      this.bytopic = String(config.bytopic || 'all');
      this.topicProperty = String(config.topic || 'topic');
      this.op1 = operand(config.op1, config.op1type, '1');
      this.op2 = operand(config.op2, config.op2type, '0');
      let duration = parseFloat(String(config.duration));
      if (Number.isNaN(duration)) duration = 250;
      this.loop = duration < 0;
      this.extend = !this.loop && (config.extend === true || config.extend === 'true');
      this.duration = toMillis(Math.abs(duration), config.units || 'ms', 'ms');
      this.overrideDelay = config.overrideDelay === true || config.overrideDelay === 'true';
      this.reset = config.reset === undefined || config.reset === null ? '' : String(config.reset);
      this.secondOutput = Number(config.outputs) === 2;
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        this.queue.push({ msg, send, done });
        if (!this.busy) this.next();
      });
      this.on('close', () => {
        for (const p of this.topics.values()) this.stop(p);
        this.topics.clear();
        this.queue.length = 0;
        this.status({});
      });
    }

    private next(): void {
      const item = this.queue.shift();
      if (!item) {
        this.busy = false;
        return;
      }
      this.busy = true;
      this.process(item.msg, item.send, (err) => {
        item.done(err ?? undefined);
        if (!this._closed) this.next();
      });
    }

    private stop(p: Pending): void {
      if (!p.timer) return;
      if (this.loop) clearInterval(p.timer);
      else clearTimeout(p.timer);
    }

    private isReset(msg: Msg): boolean {
      if (Object.prototype.hasOwnProperty.call(msg, 'reset')) return true;
      const payload = msg.payload;
      return this.reset !== '' && payload !== null && payload !== undefined && typeof payload.toString === 'function' && payload.toString() == this.reset;
    }

    private topicOf(msg: Msg): string {
      if (this.bytopic === 'all') return '_none';
      let topic: unknown;
      try {
        topic = RED.util.getMessageProperty(msg, this.topicProperty);
      } catch {
        topic = undefined;
      }
      return topic ? String(topic) : '_none';
    }

    /** An operand's value for `msg`; `cb` runs synchronously unless context or JSONata is read. */
    private evaluate(op: Operand, msg: Msg, cb: Callback): void {
      if (op.templated) return cb(null, mustache().render(String(op.value), msg));
      if (CONSTANT.has(op.type)) return cb(null, op.value);
      if (!ASYNC.has(op.type)) {
        let value: unknown;
        try {
          value = RED.util.evaluateNodeProperty(op.value, op.type, this, msg);
        } catch (err) {
          return cb(err as Error);
        }
        return cb(null, value);
      }
      RED.util.evaluateNodeProperty(op.value, op.type, this, msg, cb);
    }

    private process(msg: Msg, send: SendFn, finish: (err?: unknown) => void): void {
      const topic = this.topicOf(msg);
      let p = this.topics.get(topic);
      if (this.isReset(msg)) {
        if (p) this.stop(p);
        this.topics.delete(topic);
        this.showPending();
        return finish();
      }
      if (!p) {
        p = { timer: undefined };
        this.topics.set(topic, p);
      }
      if (this.op2.type === 'payl') p.latest = RED.util.cloneMessage(msg);
      // msg.delay holds for this message only: a later one without it waits the configured time.
      let wait = this.duration;
      if (this.overrideDelay && Object.prototype.hasOwnProperty.call(msg, 'delay') && !Number.isNaN(parseFloat(msg.delay))) {
        wait = parseFloat(msg.delay);
      }
      if (p.timer === undefined || this.loop) return this.fire(topic, p, msg, wait, send, finish);
      if (this.extend && wait > 0) {
        if (p.timer) clearTimeout(p.timer);
        p.timer = setTimeout(() => this.expire(topic, p!, msg, send, REREAD_EXTENDED), timerDelay(wait));
      }
      finish();
    }

    /** Node-RED's status: a dot while any topic waits, with the count when more than one does. */
    private showPending(): void {
      const n = this.topics.size;
      if (n === 0) this.status({});
      else if (n === 1) this.status({ fill: 'blue', shape: 'dot' });
      else this.status({ fill: 'blue', shape: 'dot', text: String(n) });
    }

    /** The first message of a cycle (or every message when looping): op1 now, op2 later. */
    private fire(topic: string, p: Pending, msg: Msg, wait: number, send: SendFn, finish: (err?: unknown) => void): void {
      const withOp1 = () => {
        if (this.op1.type === 'pay' || this.op1.type === 'nul') return armed();
        this.evaluate(this.op1, msg, (err, value) => {
          if (err) return finish(err);
          msg.payload = value;
          armed();
        });
      };
      const armed = () => {
        if (wait === 0) p.timer = null;
        else if (this.loop) {
          this.stop(p);
          if (this.op1.type !== 'nul') {
            const repeat = RED.util.cloneMessage(msg);
            const stamp = this.op1.type === 'date';
            p.timer = setInterval(() => {
              if (stamp) repeat.payload = Date.now();
              send(RED.util.cloneMessage(repeat));
            }, timerDelay(wait));
          }
        } else if (!p.timer) {
          p.timer = setTimeout(() => this.expire(topic, p, msg, send, REREAD), timerDelay(wait));
        }
        this.showPending();
        if (this.op1.type !== 'nul') send(RED.util.cloneMessage(msg));
        finish();
      };
      if (this.op2.type === 'pay') p.m2 = RED.util.cloneMessage(msg.payload);
      if (this.op2.type === 'pay' || this.op2.type === 'payl' || this.op2.type === 'nul') return withOp1();
      this.evaluate(this.op2, msg, (err, value) => {
        if (err) return finish(err);
        p.m2 = value;
        withOp1();
      });
    }

    /** The wait is over: op2 (context values read now, as Node-RED does) and the cycle ends. */
    private expire(topic: string, p: Pending, msg: Msg, send: SendFn, reread: Set<string>): void {
      p.timer = undefined;
      if (this.topics.get(topic) === p) this.topics.delete(topic);
      this.showPending();
      if (this.op2.type === 'nul') return;
      const out = (payload: unknown, base: Msg) => {
        const m2 = RED.util.cloneMessage(base);
        if (base === msg) m2.payload = payload;
        send(this.secondOutput ? [null, m2] : m2);
      };
      if (this.op2.type === 'payl') return out(undefined, p.latest ?? msg);
      if (!reread.has(this.op2.type)) return out(p.m2, msg);
      this.evaluate(this.op2, msg, (err, value) => {
        if (err) this.error(err, msg);
        else if (!this._closed) out(value, msg);
      });
    }
  }

  RED.nodes.registerType('trigger', TriggerNode);
}
