/**
 * The delay node, in Node-RED's modes: a fixed, per-message (msg.delay) or random delay; a rate
 * limit that queues or drops (dropped messages on a second output when there is one); a burst
 * limit; a per-topic queue released one message per interval ("queue") or all at once ("timed").
 * `msg.reset` discards what is held, `msg.flush` (optionally a count) releases it now.
 *
 * A held message is completed (done) exactly once: when it is sent, dropped or discarded.
 * Node-RED completes some of them twice or never; nothing observable depends on that.
 */
import { bufferLimit } from './lib/seq-limit.js';
import { hasMoreKeysThan, timerDelay, toMillis } from './lib/timing-units.js';
import { TimedHolds } from './lib/delay-wait.js';
import type { Held } from './lib/held.js';
import { BurstWindow } from './lib/burst-window.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

const has = (msg: Msg, key: string) => Object.prototype.hasOwnProperty.call(msg, key);
/** Status updates of a busy queue are coalesced to one per this many ms. */
const DEPTH_REPORT_MS = 500;

export default function (RED: RedApi) {
  const limit = bufferLimit(RED.settings as Record<string, unknown>);

  class DelayNode extends RED.nodes.Node {
    pauseType: string;
    timeout: number;
    /** Milliseconds between messages in the rate, queue and timed modes. */
    rate: number;
    private readonly fixedRate: number;
    private readonly randomFirst: number;
    private readonly randomLast: number;
    private readonly drop: boolean;
    private readonly allowRate: boolean;
    private readonly outputs: number;
    private readonly waiting: TimedHolds;
    private readonly burst: BurstWindow;
    private showDepth = false;
    private buffer: Held[] = [];
    private interval: ReturnType<typeof setInterval> | undefined;
    private depthTimer: ReturnType<typeof setTimeout> | undefined;
    private lastSent = -1;

    constructor(config: NodeConfig) {
      super(config);
      this.pauseType = String(config.pauseType || 'delay');
      this.timeout = toMillis(config.timeout, config.timeoutUnits, 's');
      const perUnit = toMillis(1, config.rateUnits, 's');
      const nb = Number(config.nbRateUnits) > 0 ? Number(config.nbRateUnits) : 1;
      const rate = (perUnit / Number(config.rate)) * nb;
      this.rate = this.fixedRate = Number.isFinite(rate) && rate > 0 ? rate : 1000;
      this.burst = new BurstWindow(Number(config.rate) || 0, toMillis(config.nbRateUnits, config.rateUnits, 's'), () => this.status({ fill: 'green', shape: 'ring', text: '' }));
      this.waiting = new TimedHolds(() => {
        if (this.showDepth) this.depth(this.waiting.size);
      });
      this.randomFirst = toMillis(config.randomFirst, config.randomUnits, 's');
      this.randomLast = toMillis(config.randomLast, config.randomUnits, 's');
      this.drop = config.drop === true || config.drop === 'true';
      this.allowRate = config.allowrate === true;
      this.outputs = Number(config.outputs) || 1;
      this.on('close', () => this.shutdown());
      switch (this.pauseType) {
        case 'delayv':
        case 'random':
        case 'delay':
          this.showDepth = this.pauseType === 'delayv' || (this.pauseType === 'delay' ? this.timeout > 1000 : this.timeout >= 1000);
          this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.delay(msg, send, done));
          break;
        case 'rate':
          this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => (this.drop ? this.rateDrop(msg, send, done) : this.rateQueue(msg, send, done)));
          break;
        case 'burst':
          this.status({ fill: 'green', shape: 'ring', text: '' });
          this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.burstLimit(msg, send, done));
          break;
        case 'queue':
        case 'timed':
          this.startInterval(this.pauseType === 'queue' ? this.releaseOne : this.releaseAll);
          this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.topicQueue(msg, send, done));
          break;
        default:
          this.error(`unknown pause type "${this.pauseType}"`);
      }
    }

    private waitFor(msg: Msg): number {
      if (this.pauseType === 'random') return this.randomFirst + (this.randomLast - this.randomFirst) * Math.random();
      if (this.pauseType === 'delay') return this.timeout;
      const v = has(msg, 'delay') ? parseFloat(msg.delay) : NaN;
      return Math.max(Number.isNaN(v) ? this.timeout : v, 0);
    }

    private delay(msg: Msg, send: SendFn, done: DoneFn): void {
      const flush = has(msg, 'flush');
      // A message carrying only `flush` is a command, not something to delay.
      if (flush && !hasMoreKeysThan(msg, 2)) {
        this.flushWaiting(msg.flush);
        done();
        return;
      }
      this.waiting.hold({ msg, send, done }, this.waitFor(msg));
      if (has(msg, 'reset')) {
        this.waiting.discard();
        this.status({ fill: 'blue', shape: 'ring', text: '0' });
      } else if (flush) this.flushWaiting(msg.flush);
      else if (this.showDepth) this.depth(this.waiting.size);
    }

    private flushWaiting(count: unknown): void {
      this.waiting.flush(count);
      this.depth(this.waiting.size);
    }

    private depth(n: number): void {
      this.status({ fill: 'blue', shape: 'dot', text: String(n) });
    }

    private reportDepth(): void {
      this.depthTimer ??= setTimeout(() => {
        this.depthTimer = undefined;
        this.depth(this.buffer.length);
      }, DEPTH_REPORT_MS);
    }

    private takeRate(msg: Msg): boolean {
      if (!this.allowRate || !has(msg, 'rate') || Number.isNaN(parseFloat(msg.rate))) return false;
      const changed = this.rate !== Number(msg.rate);
      this.rate = Number(msg.rate);
      return changed;
    }

    private startInterval(tick: () => void): void {
      clearInterval(this.interval);
      this.interval = setInterval(tick, timerDelay(this.rate));
    }

    private stopInterval(): void {
      clearInterval(this.interval);
      this.interval = undefined;
    }

    /** Sends a message leaving the buffer; one reduced to its id by flush/reset is dropped. */
    private leave(held: Held, minKeys: number): void {
      if (hasMoreKeysThan(held.msg, minKeys)) held.send(held.msg);
      held.done();
    }

    private readonly releaseNext = (): void => {
      const held = this.buffer.shift();
      if (held) this.leave(held, 1);
      else this.stopInterval();
      this.reportDepth();
    };

    private rateQueue(msg: Msg, send: SendFn, done: DoneFn): void {
      const flush = has(msg, 'flush');
      const reset = has(msg, 'reset');
      const flushCount = msg.flush;
      if (flush) delete msg.flush;
      let queued = false;
      if (hasMoreKeysThan(msg, 1)) {
        if (this.interval) {
          if (this.takeRate(msg)) this.startInterval(this.releaseNext);
          if (limit > 0 && this.buffer.length >= limit) {
            this.discardBuffer();
            this.error('too many pending messages in delay node', msg);
          } else {
            if (msg.toFront === true) this.buffer.unshift({ msg, send, done });
            else this.buffer.push({ msg, send, done });
            queued = true;
            this.reportDepth();
          }
        } else {
          this.takeRate(msg);
          if (!reset) send(msg);
          else if (flush) {
            this.buffer.push({ msg, send, done });
            queued = true;
          }
          this.reportDepth();
          this.startInterval(this.releaseNext);
        }
      }
      if (flush) {
        if (this.flushBuffer(flushCount, 1) > 0) this.startInterval(this.releaseNext);
        else this.stopInterval();
        this.depth(this.buffer.length);
      }
      if (reset) {
        if (!flush) {
          this.stopInterval();
          this.lastSent = -1;
        }
        this.discardBuffer();
        this.rate = this.fixedRate;
        this.status({ fill: 'blue', shape: 'ring', text: '0' });
      }
      if (!queued) done();
    }

    /** Sends the oldest `count` buffered messages now (all when not a number); returns how many. */
    private flushBuffer(count: unknown, minKeys: number): number {
      const n = Math.min(typeof count === 'number' ? Math.floor(count) : Infinity, this.buffer.length);
      for (let i = 0; i < n; i++) {
        const held = this.buffer.shift()!;
        delete held.msg.flush;
        delete held.msg.reset;
        this.leave(held, minKeys);
      }
      return n;
    }

    private discardBuffer(): void {
      for (const held of this.buffer) held.done();
      this.buffer = [];
    }

    private rateDrop(msg: Msg, send: SendFn, done: DoneFn): void {
      if (has(msg, 'reset')) {
        this.lastSent = -1;
        this.rate = this.fixedRate;
        this.status({ fill: 'blue', shape: 'ring', text: '0' });
      } else {
        this.takeRate(msg);
        const now = performance.now();
        if (this.lastSent < 0 || now - this.lastSent > this.rate) {
          this.lastSent = now;
          send(msg);
        } else if (this.outputs === 2) {
          send([null, msg]);
        }
      }
      done();
    }

    private burstLimit(msg: Msg, send: SendFn, done: DoneFn): void {
      if (has(msg, 'reset')) {
        this.burst.clear();
        this.status({ fill: 'green', shape: 'ring', text: '' });
      } else if (this.burst.take()) {
        send(msg);
      } else {
        if (this.outputs === 2) send([null, msg]);
        this.status({ fill: 'red', shape: 'dot', text: '' });
      }
      done();
    }

    private readonly releaseOne = (): void => {
      const held = this.buffer.shift();
      if (!held) return;
      held.send(held.msg);
      held.done();
      this.reportDepth();
    };

    private readonly releaseAll = (): void => {
      if (this.buffer.length === 0) return;
      const all = this.buffer;
      this.buffer = [];
      for (const held of all) {
        held.send(held.msg);
        held.done();
      }
      this.reportDepth();
    };

    /** One message per topic is kept: a newer one replaces the queued one in place. */
    private topicQueue(msg: Msg, send: SendFn, done: DoneFn): void {
      if (this.takeRate(msg)) this.startInterval(this.pauseType === 'queue' ? this.releaseOne : this.releaseAll);
      if (!has(msg, 'topic')) msg.topic = '_none_';
      const held: Held = { msg, send, done };
      const i = this.buffer.findIndex((h) => h.msg.topic === msg.topic);
      if (i >= 0) {
        const replaced = this.buffer[i];
        if (this.outputs === 2) replaced.send([null, replaced.msg]);
        replaced.done();
        this.buffer[i] = held;
      } else {
        this.buffer.push(held);
        this.reportDepth();
      }
      if (has(msg, 'flush')) {
        this.flushBuffer(msg.flush, 2);
        this.status({});
      }
      if (has(msg, 'reset')) {
        this.discardBuffer();
        this.rate = this.fixedRate;
        this.status({ text: 'reset' });
      }
    }

    private shutdown(): void {
      this.waiting.discard();
      this.stopInterval();
      clearTimeout(this.depthTimer);
      this.depthTimer = undefined;
      this.discardBuffer();
      this.burst.clear();
      this.status({});
    }
  }

  RED.nodes.registerType('delay', DelayNode);
}
