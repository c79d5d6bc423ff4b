/**
 * The batch node: makes message sequences (msg.parts {id, index, count}, id = the first
 * message's _msgid). `mode` "count" groups every `count` messages, the last `overlap` of which
 * start the next group (with `honourParts`, the last message of an incoming sequence also ends a
 * group); "interval" groups what arrived in each `interval` seconds (an empty
 * interval sends `{payload: null}` when `allowEmptySequence`); "concat" joins one complete
 * sequence of each of `topics`, in that order. `msg.reset` discards what is held.
 */
import { bufferLimit } from './lib/seq-limit.js';
import type { Held } from './lib/held.js';
import { SequenceGroups } from './lib/sequence-groups.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

/** Node-RED's texts, which catch nodes and flows match on. */
const TOO_MANY = 'too many pending messages in batch node';
const NO_PARTS = 'no parts property in message';
const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

export default function (RED: RedApi) {
  const limit = bufferLimit(RED.settings as Record<string, unknown>);

  /** Sends `items` as one sequence; `completeUpTo` of them are completed (the rest stay held). */
  function sendSequence(items: Held[], clone: boolean, completeUpTo = items.length): void {
    const id = items[0].msg._msgid;
    const count = items.length;
    for (let i = 0; i < count; i++) {
      const msg = clone ? RED.util.cloneMessage(items[i].msg) : items[i].msg;
      if (!has(msg, 'parts') || typeof msg.parts !== 'object' || msg.parts === null) msg.parts = {};
      msg.parts.id = id;
      msg.parts.index = i;
      msg.parts.count = count;
      items[i].send(msg);
      if (i < completeUpTo) items[i].done();
    }
  }

  const completeAll = (items: Held[]) => {
    for (const h of items) h.done();
  };

  /** Drops held messages at the buffer limit: one error, against the message that overflowed it. */
  const failLast = (items: Held[]) => {
    const last = items.length - 1;
    for (let i = 0; i < last; i++) items[i].done();
    items[last].done(TOO_MANY);
  };

  class BatchNode extends RED.nodes.Node {
    mode: string;
    private pending: Held[] = [];
    /** Concat mode: each topic's sequences. */
    private topicGroups = new Map<string, SequenceGroups>();
    private concatCount = 0;
    private timer: ReturnType<typeof setInterval> | undefined;

    constructor(config: NodeConfig) {
      super(config);
      this.mode = String(config.mode || 'count');
      this.on('close', () => this.clear());
      if (this.mode === 'count') {
        const count = Number(config.count || 1);
        const overlap = Number(config.overlap || 0);
        if (count <= overlap) {
          this.error('Invalid count and overlap');
          return;
        }
        const honourParts = config.honourParts === true || config.honourParts === 'true';
        this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.byCount(count, overlap, honourParts, { msg, send, done }));
      } else if (this.mode === 'interval') {
        const interval = Number(config.interval || 0) * 1000;
        const allowEmpty = config.allowEmptySequence === true || config.allowEmptySequence === 'true';
        const tick = () => this.flushInterval(allowEmpty);
        if (interval > 0) this.timer = setInterval(tick, interval);
        this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
          if (has(msg, 'reset')) {
            this.clear();
            if (interval > 0) this.timer = setInterval(tick, interval);
            done();
            return;
          }
          this.hold({ msg, send, done });
        });
      } else if (this.mode === 'concat') {
        const topics = (Array.isArray(config.topics) ? (config.topics as { topic?: unknown }[]) : []).map((t) => String(t?.topic));
        this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.concat(topics, { msg, send, done }));
      } else {
        this.error('unexpected mode');
      }
    }

    private byCount(count: number, overlap: number, honourParts: boolean, held: Held): void {
      const msg = held.msg;
      if (has(msg, 'reset')) {
        this.clear();
        held.done();
        return;
      }
      const queue = this.pending;
      queue.push(held);
      const endsSequence = honourParts && has(msg, 'parts') && msg.parts !== null && typeof msg.parts === 'object' && msg.parts.index + 1 === msg.parts.count;
      if (queue.length === count || endsSequence) {
        // Overlapping messages are sent again with the next group, so each send gets a copy.
        sendSequence(queue, overlap > 0, queue.length - overlap);
        this.pending = overlap === 0 ? [] : queue.slice(-overlap);
      } else if (limit > 0 && queue.length > limit) {
        this.pending = [];
        failLast(queue);
      }
    }

    private hold(held: Held): void {
      this.pending.push(held);
      if (limit > 0 && this.pending.length > limit) {
        failLast(this.pending);
        this.pending = [];
      }
    }

    private flushInterval(allowEmpty: boolean): void {
      if (this.pending.length > 0) {
        const items = this.pending;
        this.pending = [];
        sendSequence(items, false);
      } else if (allowEmpty) {
        this.send({ payload: null, parts: { id: RED.util.generateId(), index: 0, count: 1 } });
      }
    }

    private concat(topics: string[], held: Held): void {
      const msg = held.msg;
      if (has(msg, 'reset')) {
        this.clear();
        held.done();
        return;
      }
      if (!topics.includes(msg.topic)) {
        held.done();
        return;
      }
      const parts = msg.parts;
      if (!parts || typeof parts !== 'object' || !has(parts, 'id') || !has(parts, 'index') || !has(parts, 'count')) {
        held.done(NO_PARTS);
        return;
      }
      let byTopic = this.topicGroups.get(msg.topic);
      if (!byTopic) {
        byTopic = new SequenceGroups(false);
        this.topicGroups.set(msg.topic, byTopic);
      }
      byTopic.add(parts.id, held, parts.count);
      this.concatCount++;
      if (limit > 0 && this.concatCount > limit) {
        for (const t of this.topicGroups.values()) for (const h of t.drain()) if (h !== held) h.done();
        held.done(TOO_MANY);
        this.topicGroups.clear();
        this.concatCount = 0;
        return;
      }
      this.tryConcat(topics);
    }

    /** When every topic's oldest sequence is complete, they are sent as one. */
    private tryConcat(topics: string[]): void {
      const items: Held[] = [];
      for (const topic of topics) {
        const sequence = this.topicGroups.get(topic)?.oldestComplete();
        if (!sequence) return;
        items.push(...sequence);
      }
      for (const topic of new Set(topics)) this.topicGroups.get(topic)!.takeOldest();
      this.concatCount -= items.length;
      sendSequence(items, true);
    }

    private clear(): void {
      clearInterval(this.timer);
      this.timer = undefined;
      completeAll(this.pending);
      this.pending = [];
      for (const t of this.topicGroups.values()) completeAll(t.drain());
      this.topicGroups.clear();
      this.concatCount = 0;
    }
  }

  RED.nodes.registerType('batch', BatchNode);
}
