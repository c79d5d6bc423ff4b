/**
 * The join node's reduce mode: messages of a sequence (grouped by `parts.id`) are held until the
 * sequence is complete, then folded in index order through a JSONata expression with `$A` (the
 * accumulator), `$I` (the index) and `$N` (the count), and an optional fix-up expression runs on
 * the result. Messages are handled strictly one after another, because evaluation may be
 * asynchronous and overlapping groups would otherwise interleave.
 */
import type { Held } from './held.js';
import { SequenceGroups } from './sequence-groups.js';
import { evaluateJSONata } from './jsonata.js';
import type { PreparedJSONata, RedUtil, UtilNode } from '../../runtime/red-api/red-api-types.js';

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
  private readonly groups = new SequenceGroups(false);
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
    for (const h of this.groups.drain()) h.done();
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
    if (this.groups.add(parts.id, held, parts.count)) {
      await this.reduce(this.groups.take(parts.id));
      return;
    }
    if (this.options.maxHeld > 0 && this.groups.size > this.options.maxHeld) {
      for (const h of this.groups.drain()) if (h !== held) h.done();
      // Node-RED's text, reported as a string as Node-RED does (no "Error: " prefix).
      held.done('too many pending messages in join node');
    }
  }

  /** `group` is complete, so its length is the sequence's count. */
  private async reduce(group: Held[]): Promise<void> {
    const { exp, fixup, right } = this.options;
    const order = right ? -1 : 1;
    const held = [...group].sort((x, y) => order * (x.msg.parts.index - y.msg.parts.index));
    const current = group[group.length - 1];
    try {
      let acc = await this.initial();
      for (const h of held) {
        exp.assign('I', h.msg.parts.index);
        exp.assign('N', group.length);
        exp.assign('A', acc);
        acc = await evaluateJSONata(this.util, exp, h.msg);
      }
      if (fixup) {
        fixup.assign('N', group.length);
        fixup.assign('A', acc);
        acc = await evaluateJSONata(this.util, fixup, {});
      }
      // Node-RED sends the last message in fold order with the result as its payload: it keeps
      // msg.res of an http-in request, msg.parts and everything else the flow relies on.
      const last = held[held.length - 1];
      last.msg.payload = acc;
      last.send(last.msg);
    } catch (err) {
      // The error is reported against the message that completed the group; the others complete.
      for (const h of group) if (h !== current) h.done();
      throw err;
    }
    for (const h of group) h.done();
  }

  private initial(): Promise<unknown> {
    return new Promise((resolve, reject) =>
      this.util.evaluateNodeProperty(this.options.init, this.options.initType, this.node, {}, (err, value) => (err ? reject(err) : resolve(value))),
    );
  }
}
