/**
 * The split node: one message per piece of a string, buffer, array or object, each carrying
 * Node-RED's `msg.parts` so a join node in auto mode can rebuild the original. In stream mode a
 * string or buffer's trailing piece is held back and prefixed to the next message.
 *
 * Differs from Node-RED on purpose: a buffer ending in the separator yields a final empty piece
 * (as a string does), so the announced `parts.count` is always met and joins complete.
 */
import { parseByteArray, unescapeSeparator } from './lib/parts-escape.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

interface Parts {
  id: string;
  type: string;
  index?: number;
  count?: number;
  ch?: string | number[];
  len?: number;
  key?: string;
  property?: string;
  parts?: unknown;
}

export default function (RED: RedApi) {
  class SplitNode extends RED.nodes.Node {
    private readonly stream: boolean;
    private readonly spltType: string;
    private readonly addname: string;
    /** The message property split (Node-RED 4's "Split msg.<property>"). */
    private readonly property: string;
    /** A string, a Buffer (bin) or a length (len). */
    private splt: string | Buffer | number = '\n';
    private spltBytes: number[] = [];
    private spltText = '';
    private arraySplt = 1;
    /** Index of the next piece in stream mode, where pieces of several messages form one sequence. */
    private c = 0;
    private remainder = '';
    private buffer: Buffer = Buffer.alloc(0);
    /** Dones of stream messages whose content is still held in the remainder. */
    private pendingDones: DoneFn[] = [];

    constructor(config: NodeConfig) {
      super(config);
      this.stream = config.stream === true;
      this.spltType = (config.spltType as string) || 'str';
      this.addname = (config.addname as string) || '';
      this.property = (config.property as string) || 'payload';
      try {
        if (this.spltType === 'str') {
          this.splt = unescapeSeparator((config.splt as string) || '\\n');
        } else if (this.spltType === 'bin') {
          const { buffer, bytes } = parseByteArray(String(config.splt));
          this.splt = buffer;
          this.spltBytes = bytes;
          this.spltText = buffer.toString();
        } else if (this.spltType === 'len') {
          this.splt = parseInt(String(config.splt), 10);
          if (Number.isNaN(this.splt) || this.splt < 1) throw new Error(`invalid split length: ${config.splt}`);
        }
        this.arraySplt = config.arraySplt === undefined ? 1 : parseInt(String(config.arraySplt), 10);
        if (Number.isNaN(this.arraySplt) || this.arraySplt < 1) throw new Error(`invalid array split length: ${config.arraySplt}`);
      } catch (err) {
        this.error(`Invalid split property: ${String(err)}`);
        return;
      }
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.split(msg, send, done));
    }

    private split(msg: Msg, send: SendFn, done: DoneFn): void {
      const onPayload = this.property === 'payload';
      let payload: unknown;
      try {
        payload = onPayload ? msg.payload : RED.util.getMessageProperty(msg, this.property);
      } catch {
        payload = undefined;
      }
      if (payload === undefined) {
        done();
        return;
      }
      const parts: Parts = Object.prototype.hasOwnProperty.call(msg, 'parts')
        ? { parts: msg.parts, id: RED.util.generateId(), type: '' }
        : { id: RED.util.generateId(), type: '' };
      // A join downstream reads and writes the same property.
      if (!onPayload) parts.property = this.property;
      // The pieces are fresh values; only the rest of the message is copied for each of them.
      if (onPayload) delete msg.payload;
      delete msg.parts;
      delete msg._msgid;
      if (typeof payload === 'string') this.splitString(msg, parts, payload, send, done);
      else if (Array.isArray(payload)) this.splitArray(msg, parts, payload, send, done);
      else if (Buffer.isBuffer(payload)) this.splitBuffer(msg, parts, payload, send, done);
      else if (typeof payload === 'object' && payload !== null) this.splitObject(msg, parts, payload as Record<string, unknown>, send, done);
      else done();
    }

    private sendPiece(base: Msg, parts: Parts, payload: unknown, send: SendFn): void {
      const m = RED.util.cloneMessage(base);
      if (this.property === 'payload') m.payload = payload;
      else RED.util.setMessageProperty(m, this.property, payload, true);
      m.parts = { ...parts };
      send(m);
    }

    private flushPending(): void {
      for (const d of this.pendingDones) d();
      this.pendingDones = [];
    }

    private splitString(msg: Msg, parts: Parts, payload: string, send: SendFn, done: DoneFn): void {
      const data = this.remainder + payload;
      parts.type = 'string';
      if (this.spltType === 'len') {
        this.splitByLength(msg, parts, data, send, done);
        return;
      }
      parts.ch = this.spltType === 'bin' ? this.spltBytes : (this.splt as string);
      const pieces = data.split(this.spltType === 'bin' ? this.spltText : (this.splt as string));
      const last = pieces.length - 1;
      if (!this.stream) this.c = 0;
      for (let i = 0; i < last; i++) {
        parts.index = this.c++;
        if (!this.stream) parts.count = pieces.length;
        this.sendPiece(msg, parts, pieces[i], send);
      }
      if (this.stream) {
        this.remainder = pieces[last];
      } else {
        parts.index = this.c++;
        parts.count = pieces.length;
        this.sendPiece(msg, parts, pieces[last], send);
        this.c = 0;
      }
      done();
    }

    private splitByLength<T extends string | Buffer>(msg: Msg, parts: Parts, data: T, send: SendFn, done: DoneFn): void {
      const len = this.splt as number;
      const count = Math.ceil(data.length / len);
      if (parts.type === 'string') parts.ch = '';
      parts.len = len;
      if (!this.stream) {
        parts.count = count;
        this.c = 0;
      }
      const slice = (from: number, to: number) => (typeof data === 'string' ? data.substring(from, to) : data.subarray(from, to));
      let pos = 0;
      for (let i = 0; i < count - 1; i++, pos += len) {
        parts.index = this.c++;
        this.sendPiece(msg, parts, slice(pos, pos + len), send);
      }
      if (count > 1) this.flushPending();
      const rest = slice(pos, data.length);
      if (!this.stream || rest.length === len) {
        parts.index = this.c++;
        this.sendPiece(msg, parts, rest, send);
        this.flushPending();
        done();
        this.keep(typeof data === 'string' ? '' : Buffer.alloc(0));
      } else {
        this.keep(rest);
        this.pendingDones.push(done);
      }
    }

    private keep(rest: string | Buffer): void {
      if (typeof rest === 'string') this.remainder = rest;
      else this.buffer = rest;
    }

    private splitArray(msg: Msg, parts: Parts, payload: unknown[], send: SendFn, done: DoneFn): void {
      const size = this.arraySplt;
      const count = Math.ceil(payload.length / size);
      parts.type = 'array';
      parts.count = count;
      parts.len = size;
      for (let i = 0, pos = 0; i < count; i++, pos += size) {
        parts.index = i;
        this.sendPiece(msg, parts, size === 1 ? payload[pos] : payload.slice(pos, pos + size), send);
      }
      done();
    }

    private splitObject(msg: Msg, parts: Parts, payload: Record<string, unknown>, send: SendFn, done: DoneFn): void {
      const keys = Object.keys(payload);
      parts.type = 'object';
      parts.count = keys.length;
      for (let i = 0; i < keys.length; i++) {
        parts.key = keys[i];
        parts.index = i;
        if (this.addname !== '') RED.util.setMessageProperty(msg, this.addname, keys[i]);
        this.sendPiece(msg, parts, payload[keys[i]], send);
      }
      done();
    }

    private splitBuffer(msg: Msg, parts: Parts, payload: Buffer, send: SendFn, done: DoneFn): void {
      const buff = this.buffer.length ? Buffer.concat([this.buffer, payload]) : payload;
      parts.type = 'buffer';
      if (this.spltType === 'len') {
        this.splitByLength(msg, parts, buff, send, done);
        return;
      }
      const sep = this.splt as string | Buffer;
      const sepLength = typeof sep === 'string' ? Buffer.byteLength(sep) : sep.length;
      parts.ch = this.spltType === 'bin' ? this.spltBytes : (sep as string);
      const cuts: number[] = [];
      for (let pos = buff.indexOf(sep); pos > -1; pos = buff.indexOf(sep, pos + sepLength)) cuts.push(pos);
      if (!this.stream) {
        parts.count = cuts.length + 1;
        this.c = 0;
      }
      let start = 0;
      for (const cut of cuts) {
        parts.index = this.c++;
        this.sendPiece(msg, parts, buff.subarray(start, cut), send);
        start = cut + sepLength;
      }
      if (cuts.length) this.flushPending();
      const rest = buff.subarray(start);
      if (!this.stream) {
        parts.index = this.c++;
        this.sendPiece(msg, parts, rest, send);
        this.buffer = Buffer.alloc(0);
        done();
      } else if (rest.length === 0) {
        this.buffer = rest;
        done();
      } else {
        this.buffer = rest;
        this.pendingDones.push(done);
      }
    }
  }

  RED.nodes.registerType('split', SplitNode);
}
