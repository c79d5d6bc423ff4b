/**
 * The sort node. With `targetType` "msg" it sorts the array in a message property, by the
 * elements themselves or by a JSONata key per element. With "seq" it collects a message sequence
 * (msg.parts id/index/count), sorts it by a message property or JSONata key and sends it on with
 * renumbered `parts.index`. `as_num` compares keys as numbers.
 */
import { bufferLimit } from './lib/seq-limit.js';
import type { Held } from './lib/held.js';
import { evaluateJSONata } from './lib/jsonata.js';
import { SequenceGroups } from './lib/sequence-groups.js';
import type { DoneFn, Msg, NodeConfig, PreparedJSONata, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

interface Keyed<T> {
  item: T;
  key: unknown;
}

export default function (RED: RedApi) {
  const limit = bufferLimit(RED.settings as Record<string, unknown>);

  /**
   * Node-RED's texts, which catch nodes and flows match on. They are reported as strings, as
   * Node-RED does, so the catch node's error.message carries no "Error: " prefix.
   */
  const invalidExp = (err: unknown) => `Invalid JSONata expression in sort node: ${(err as Error).message}`;
  const TOO_MANY = 'Too many pending messages in sort node';

  const evaluate = (exp: PreparedJSONata, input: unknown) => evaluateJSONata(RED.util, exp, input).catch((err: unknown) => Promise.reject(invalidExp(err)));

  class SortNode extends RED.nodes.Node {
    order: string;
    asNum: boolean;
    target: string;
    targetIsProp: boolean;
    seqKey: string;
    private readonly exp: PreparedJSONata | null = null;
    private readonly dir: number;
    private readonly pending = new SequenceGroups(true);

    constructor(config: NodeConfig) {
      super(config);
      this.order = String(config.order || 'ascending');
      this.asNum = config.as_num === true || config.as_num === 'true';
      this.target = String(config.target || 'payload');
      this.targetIsProp = config.targetType === 'msg';
      this.seqKey = String(config.seqKey || 'payload');
      this.dir = this.order === 'ascending' ? 1 : -1;
      const keyIsExp = this.targetIsProp ? config.msgKeyType === 'jsonata' : config.seqKeyType === 'jsonata';
      if (keyIsExp) {
        try {
          this.exp = RED.util.prepareJSONataExpression(String((this.targetIsProp ? config.msgKey : config.seqKey) ?? ''), this);
        } catch (err) {
          this.error(invalidExp(err));
          return;
        }
      }
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
        if (this.targetIsProp) this.sortProperty(msg, send, done).catch((err) => done(err));
        else this.collect({ msg, send, done });
      });
      this.on('close', () => {
        for (const h of this.pending.drain()) h.done();
      });
    }

    private readonly compare = (a: Keyed<unknown>, b: Keyed<unknown>): number => {
      const x = this.asNum ? Number(a.key) : a.key;
      const y = this.asNum ? Number(b.key) : b.key;
      if (x === y) return 0;
      return (x as number) > (y as number) ? this.dir : -this.dir;
    };

    private async sorted<T>(items: T[], key: (item: T) => unknown, input: (item: T) => unknown): Promise<T[]> {
      const keyed: Keyed<T>[] = this.exp
        ? await Promise.all(items.map(async (item) => ({ item, key: await evaluate(this.exp!, input(item)) })))
        : items.map((item) => ({ item, key: key(item) }));
      return keyed.sort(this.compare).map((k) => k.item);
    }

    private async sortProperty(msg: Msg, send: SendFn, done: DoneFn): Promise<void> {
      const data = RED.util.getMessageProperty(msg, this.target);
      // Node-RED sends nothing when the property is not an array.
      if (Array.isArray(data)) {
        RED.util.setMessageProperty(msg, this.target, await this.sorted(data, (e) => e, (e) => e));
        send(msg);
      }
      done();
    }

    private collect(held: Held): void {
      const parts = held.msg.parts;
      if (!parts || typeof parts !== 'object' || !('id' in parts) || !('index' in parts)) {
        held.done();
        return;
      }
      if (this.pending.add(parts.id, held, parts.count)) void this.release(this.pending.take(parts.id));
      else if (limit > 0 && this.pending.size > limit) this.dropOldest();
    }

    private async release(items: Held[]): Promise<void> {
      let ordered: Held[];
      try {
        ordered = await this.sorted(items, (h) => RED.util.getMessageProperty(h.msg, this.seqKey), (h) => h.msg);
      } catch (err) {
        // The sequence's last message carries the error; the others just complete.
        for (let i = 0; i < items.length - 1; i++) items[i].done();
        items[items.length - 1].done(err);
        return;
      }
      for (let i = 0; i < ordered.length; i++) {
        const h = ordered[i];
        h.msg.parts.index = i;
        h.send(h.msg);
        h.done();
      }
    }

    private dropOldest(): void {
      const items = this.pending.takeOldest();
      const last = items.length - 1;
      for (let i = 0; i < last; i++) items[i].done();
      items[last].done(TOO_MANY);
    }
  }

  RED.nodes.registerType('sort', SortNode);
}
