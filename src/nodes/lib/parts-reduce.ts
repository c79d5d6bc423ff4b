/**
 * The join node's reduce mode: messages of a sequence (grouped by `parts.id`) are held until the
 * sequence is complete, then folded in index order through a JSONata expression with `$A` (the
 * accumulator), `$I` (the index) and `$N` (the count), and an optional fix-up expression runs on
 * the result. Messages are handled strictly one after another, because evaluation may be
 * asynchronous and overlapping groups would otherwise interleave.
 */
import type { DoneFn, Msg, SendFn } from '../../runtime/node.js';
import type { PreparedJSONata, RedUtil, UtilNode } from '../../runtime/util/index.js';

interface Held {
  msg: Msg;
  send: SendFn;
  done: DoneFn;
}

interface Group {
  count: number | undefined;
  held: Held[];
}

export interface ReduceOptions {
  exp: PreparedJSONata;
  fixup: PreparedJSONata | undefined;
  init: unknown;
  initType: string;
  right: boolean;
  /** Node-RED's nodeMessageBufferMaxLength: 0 means unbounded. */
  maxHeld: number;
}

export class Reducer {
  private readonly groups = new Map<string, Group>();
  private heldCount = 0;
  private readonly queue: Held[] = [];
  private busy = false;

  constructor(
    private readonly util: RedUtil,
    private readonly node: UtilNode,
    private readonly options: ReduceOptions,
  ) {}

  push(held: Held): void {
    this.queue.push(held);
    if (!this.busy) this.next();
  }

  /** Releases the dones of every held message (node closing). */
  release(): void {
    for (const group of this.groups.values()) for (const h of group.held) h.done();
    this.groups.clear();
    this.heldCount = 0;
  }

  private next(): void {
    const held = this.queue.shift();
    if (!held) {
      this.busy = false;
      return;
    }
    this.busy = true;
    this.accept(held)
      .catch((err) => held.done(err))
      .finally(() => this.next());
  }

  private async accept(held: Held): Promise<void> {
    const parts = held.msg.parts;
    if (parts === null || typeof parts !== 'object') {
      held.send(held.msg);
      held.done();
      return;
    }
    let group = this.groups.get(parts.id);
    if (!group) {
      group = { count: parts.count, held: [] };
      this.groups.set(parts.id, group);
    }
    if (group.count === undefined && parts.count !== undefined) group.count = parts.count;
    group.held.push(held);
    this.heldCount++;
    if (group.held.length === group.count) {
      this.groups.delete(parts.id);
      this.heldCount -= group.held.length;
      await this.reduce(group);
      return;
    }
    if (this.options.maxHeld > 0 && this.heldCount > this.options.maxHeld) {
      for (const g of this.groups.values()) for (const h of g.held) if (h !== held) h.done();
      this.groups.clear();
      this.heldCount = 0;
      throw new Error('Too many pending messages');
    }
  }

  private async reduce(group: Group): Promise<void> {
    const { exp, fixup, right } = this.options;
    const order = right ? -1 : 1;
    const held = [...group.held].sort((x, y) => order * (x.msg.parts.index - y.msg.parts.index));
    const current = group.held[group.held.length - 1];
    try {
      let acc = await this.initial();
      for (const h of held) {
        exp.assign('I', h.msg.parts.index);
        exp.assign('N', group.count);
        exp.assign('A', acc);
        acc = await this.evaluate(exp, h.msg);
      }
      if (fixup) {
        fixup.assign('N', group.count);
        fixup.assign('A', acc);
        acc = await this.evaluate(fixup, {});
      }
      current.send({ payload: acc });
    } catch (err) {
      // The error is reported against the message that completed the group; the others complete.
      for (const h of group.held) if (h !== current) h.done();
      throw err;
    }
    for (const h of group.held) h.done();
  }

  private initial(): Promise<unknown> {
    return new Promise((resolve, reject) =>
      this.util.evaluateNodeProperty(this.options.init, this.options.initType, this.node, {}, (err, value) => (err ? reject(err) : resolve(value))),
    );
  }

  private evaluate(exp: PreparedJSONata, msg: unknown): Promise<unknown> {
    return new Promise((resolve, reject) => this.util.evaluateJSONataExpression(exp, msg, (err, value) => (err ? reject(err) : resolve(value))));
  }
}
