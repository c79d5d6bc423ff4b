/**
 * The join node. Auto mode rebuilds what a split node took apart, reading everything from
 * `msg.parts`; manual mode builds a string, buffer, array, key/value object or merged object
 * from a count, a timeout (restarted by `msg.restartTimeout`) or `msg.complete`, ignoring an
 * incoming `msg.parts` unless `useparts` (missing in flows older than the option: on); reduce mode
 * folds a sequence through JSONata.
 */
import { parseByteArray, unescapeSeparator } from './lib/parts-escape.js';
import { Reducer } from './lib/parts-reduce.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

type Joiner = string | Buffer | number[] | undefined;

interface Group {
  type: string;
  payload: any;
  currentCount: number;
  targetCount: number;
  joinChar: Joiner;
  arrayLen: number | undefined;
  bufferLen: number;
  /** Where the result goes: the sequence's msg.parts.property in auto mode. */
  prop: string;
  msg: Msg;
  send: SendFn;
  dones: DoneFn[];
  timeout?: ReturnType<typeof setTimeout>;
}

/** What one message contributes, read from msg.parts (auto) or the node's settings (manual). */
interface Target {
  id: string;
  type: string;
  count: number;
  joinChar: Joiner;
  key: unknown;
  arrayLen: number | undefined;
  index: number | undefined;
  prop: string;
}

const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

const joinText = (ch: Joiner): string => (Array.isArray(ch) ? Buffer.from(ch).toString() : ch === undefined ? ',' : ch.toString());

export default function (RED: RedApi) {
  class JoinNode extends RED.nodes.Node {
    private readonly mode: string;
    private readonly build: string;
    private readonly property: string;
    private readonly full: boolean;
    private readonly key: string;
    private readonly timer: number;
    private readonly count: number;
    private readonly countFromParts: boolean;
    private readonly useParts: boolean;
    private readonly accumulate: boolean;
    private joiner: string | Buffer = '';
    private readonly inflight = new Map<string, Group>();
    private reducer: Reducer | undefined;

    constructor(config: NodeConfig) {
      super(config);
      this.mode = (config.mode as string) || 'auto';
      this.full = config.propertyType === 'full';
      this.property = this.full ? 'payload' : (config.property as string) || 'payload';
      this.key = (config.key as string) || 'topic';
      this.timer = this.mode === 'auto' ? 0 : Number(config.timeout || 0) * 1000;
      this.count = Number(config.count || 0);
      this.countFromParts = config.count === '';
      this.useParts = config.useparts === undefined || Boolean(config.useparts);
      this.build = (config.build as string) || 'array';
      this.accumulate = config.accumulate === true || config.accumulate === 'true';
      try {
        const joiner = (config.joiner as string) || '';
        if (config.joinerType === 'bin') this.joiner = parseByteArray(joiner || '[]').buffer;
        else this.joiner = unescapeSeparator(joiner);
        if (this.mode === 'reduce') this.reducer = this.createReducer(config);
      } catch (err) {
        this.error(`Invalid expression: ${(err as Error).message}`);
        return;
      }
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        if (this.reducer) return this.reducer.push({ msg, send, done });
        try {
          this.accept(msg, send, done);
        } catch (err) {
          done(err);
        }
      });
      this.on('close', () => {
        for (const group of this.inflight.values()) {
          clearTimeout(group.timeout);
          for (const d of group.dones) d();
        }
        this.inflight.clear();
        this.reducer?.release();
      });
    }

    private createReducer(config: NodeConfig): Reducer {
      const fixup = config.reduceFixup === '' || config.reduceFixup === null || config.reduceFixup === undefined ? undefined : String(config.reduceFixup);
      const max = Number(RED.settings.nodeMessageBufferMaxLength ?? 0);
      return new Reducer(RED.util, this, {
        exp: RED.util.prepareJSONataExpression(String(config.reduceExp ?? ''), this),
        fixup: fixup === undefined ? undefined : RED.util.prepareJSONataExpression(fixup, this),
        init: config.reduceInit,
        initType: (config.reduceInitType as string) || 'str',
        right: config.reduceRight === true || config.reduceRight === 'true',
        maxHeld: Number.isFinite(max) ? max : 0,
      });
    }

    private target(msg: Msg): Target {
      if (this.mode === 'auto') {
        const p = msg.parts;
        return { id: p.id, type: p.type, count: p.count, joinChar: p.ch, key: p.key, arrayLen: p.len, index: p.index, prop: p.property || 'payload' };
      }
      let count = this.count;
      let id = '_';
      // With no count set, each incoming sequence is its own group, complete at its count.
      if (this.countFromParts && has(msg, 'parts')) {
        count = msg.parts?.count || 0;
        if (msg.parts !== null && typeof msg.parts === 'object' && has(msg.parts, 'id')) id = msg.parts.id;
      }
      const key = this.build === 'object' ? RED.util.getMessageProperty(msg, this.key) : undefined;
      return { id, type: this.build, count, joinChar: this.joiner, key, arrayLen: undefined, index: undefined, prop: this.property };
    }

    private accept(msg: Msg, send: SendFn, done: DoneFn): void {
      let property: unknown = msg;
      if (!this.full) {
        try {
          property = RED.util.getMessageProperty(msg, this.property);
        } catch {
          this.warn(`Message property ${this.property} not found`);
          done();
          return;
        }
      }
      if (this.mode === 'auto' && (msg.parts === null || typeof msg.parts !== 'object' || !has(msg.parts, 'id'))) {
        // A reset without parts drops every sequence in progress.
        if (has(msg, 'reset')) this.discardAll();
        else this.warn("Message missing msg.parts property - cannot join in 'auto' mode");
        done();
        return;
      }
      if (this.mode === 'custom' && !this.useParts && has(msg, 'parts')) {
        if (msg.parts !== null && typeof msg.parts === 'object' && has(msg.parts, 'parts')) msg.parts = { parts: msg.parts.parts };
        else delete msg.parts;
      }
      const t = this.target(msg);
      if (this.mode === 'auto') property = RED.util.getMessageProperty(msg, t.prop);
      if (has(msg, 'restartTimeout')) {
        const running = this.inflight.get(t.id);
        if (running) this.restartTimer(t.id, running);
      }
      if (has(msg, 'reset')) {
        this.discard(t.id);
        done();
        return;
      }
      if (t.type === 'object' && (t.key === null || t.key === undefined || t.key === '')) {
        if (this.mode === 'auto') this.warn("Message missing 'msg.parts.key' property - cannot add to object");
        else if (!has(msg, 'complete')) this.warn(`Message missing key property 'msg.${this.key}' - cannot add to object`);
        else if (this.inflight.has(t.id)) {
          const group = this.inflight.get(t.id)!;
          group.msg.complete = msg.complete;
          group.send = send;
          this.complete(t.id);
        }
        done();
        return;
      }
      const group = this.inflight.get(t.id) ?? this.open(t, msg, send);
      group.dones.push(done);
      if (!this.add(group, t, msg, property, done)) return;
      Object.assign(group.msg, msg);
      group.send = send;
      const target = has(msg, 'parts') ? group.targetCount || msg.parts?.count : group.targetCount;
      if ((target > 0 && group.currentCount >= target) || has(msg, 'complete')) this.complete(t.id);
    }

    private open(t: Target, msg: Msg, send: SendFn): Group {
      const keyed = t.type === 'object' || t.type === 'merged';
      const group: Group = {
        type: keyed ? 'object' : t.type,
        payload: keyed ? {} : [],
        currentCount: 0,
        targetCount: t.count,
        joinChar: t.type === 'string' || t.type === 'buffer' ? t.joinChar : undefined,
        arrayLen: t.type === 'array' ? t.arrayLen : undefined,
        bufferLen: 0,
        prop: t.prop,
        msg: RED.util.cloneMessage(msg),
        send,
        dones: [],
      };
      this.inflight.set(t.id, group);
      this.restartTimer(t.id, group);
      return group;
    }

    private restartTimer(id: string, group: Group): void {
      if (this.timer <= 0) return;
      clearTimeout(group.timeout);
      group.timeout = setTimeout(() => this.complete(id), this.timer);
    }

    /** Adds the message's property to its group; false when the message was rejected. */
    private add(group: Group, t: Target, msg: Msg, property: any, done: DoneFn): boolean {
      if (t.type === 'buffer' && property !== undefined) {
        if (!Buffer.isBuffer(property) && typeof property !== 'string' && !Array.isArray(property)) {
          // A string, as Node-RED reports it: the catch node's message has no "Error: " prefix.
          done(`Cannot join ${typeof property} to buffer`);
          return false;
        }
        group.bufferLen += property.length;
      }
      if (t.type === 'object') {
        group.payload[t.key as string] = property;
        group.currentCount = Object.keys(group.payload).length;
      } else if (t.type === 'merged') {
        if (Array.isArray(property) || typeof property !== 'object' || property === null) {
          if (!has(msg, 'complete')) this.warn('Cannot merge non-object types');
        } else {
          for (const k of Object.keys(property)) if (k !== '_msgid') group.payload[k] = property[k];
          group.currentCount = Object.keys(group.payload).length;
        }
      } else if (t.index !== undefined && !Number.isNaN(Number(t.index))) {
        // A repeated index replaces its value without counting again.
        if (group.payload[t.index] == null) group.currentCount++;
        group.payload[t.index] = property;
      } else if (property !== undefined) {
        group.payload.push(property);
        group.currentCount++;
      }
      return true;
    }

    private discardAll(): void {
      for (const id of [...this.inflight.keys()]) this.discard(id);
    }

    private discard(id: string): void {
      const group = this.inflight.get(id);
      if (!group) return;
      clearTimeout(group.timeout);
      for (const d of group.dones) d();
      this.inflight.delete(id);
    }

    private complete(id: string): void {
      const group = this.inflight.get(id);
      if (!group) return;
      clearTimeout(group.timeout);
      group.timeout = undefined;
      if (!this.accumulate || has(group.msg, 'complete')) this.inflight.delete(id);
      let result: unknown = group.payload;
      if (group.type === 'array' && (group.arrayLen ?? 0) > 1) result = (group.payload as unknown[]).flat();
      else if (group.type === 'buffer') result = this.joinBuffers(group);
      else if (group.type === 'string') result = group.payload.join(joinText(group.joinChar));
      let out = group.msg;
      if (this.full) out = RED.util.cloneMessage(out);
      RED.util.setMessageProperty(out, group.prop, result);
      if (out.parts && typeof out.parts === 'object' && has(out.parts, 'parts')) out.parts = out.parts.parts;
      else delete out.parts;
      delete out.complete;
      // With accumulation the group lives on, so what is sent must not share its state.
      group.send(this.accumulate ? RED.util.cloneMessage(out) : out);
      const dones = group.dones;
      group.dones = [];
      for (const d of dones) d();
    }

    private joinBuffers(group: Group): Buffer {
      const list: Buffer[] = group.payload.map((p: unknown) => (Buffer.isBuffer(p) ? p : Buffer.from(p as string)));
      if (group.joinChar === undefined) return Buffer.concat(list, group.bufferLen);
      const sep = Buffer.isBuffer(group.joinChar) ? group.joinChar : Buffer.from(group.joinChar as string);
      const out: Buffer[] = [];
      list.forEach((b, i) => {
        if (i > 0) out.push(sep);
        out.push(b);
      });
      return Buffer.concat(out);
    }
  }

  RED.nodes.registerType('join', JoinNode);
}
