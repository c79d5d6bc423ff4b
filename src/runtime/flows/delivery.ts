import { performance } from 'node:perf_hooks';
import type { Msg } from '../red-api/red-api-types.js';

/** Whatever takes delivered messages: a live node. */
export interface Receiver {
  _deliver(msg: Msg): void;
  /** The flow the receiver runs in; its path starts with the tab id. */
  readonly _flow?: { readonly path: string };
}

/** How long one drain may keep delivering before it yields to I/O and timers. */
const SLICE_MS = 1;
/** Deliveries between clock reads inside a drain (a read costs about as much as 30 deliveries). */
const CLOCK_EVERY = 64;
/** Delivered slots kept at the front of the arrays before they are cut off. */
const COMPACT_AT = 4096;

/** The tab a receiver runs in: the first segment of its flow's path. */
function tabOf(target: Receiver): string | undefined {
  const path = target._flow?.path;
  if (path === undefined) return undefined;
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash);
}

/**
 * Asynchronous message delivery with Node-RED's ordering: a message sent now is handled after the
 * current handler returns, in send order (FIFO across the whole runtime). Node-RED pays one
 * setImmediate — one event-loop turn — per delivery. Here deliveries are queued and drained in
 * slices: a drain keeps taking what it queued itself for up to SLICE_MS, so a message passing
 * through a chain of nodes does not wait for a loop turn at every hop, and then yields wherever it
 * is, so I/O and timers (the admin API among them) get the loop at least every millisecond however
 * many messages a flow fans out.
 *
 * The queue is bounded: when it holds `limit` messages, `onOverflow` is told (once per overflow)
 * so the runtime can stop the flow that floods it; messages for blocked tabs are dropped.
 */
export class DeliveryQueue {
  private targets: (Receiver | undefined)[] = [];
  private messages: (Msg | undefined)[] = [];
  /** Index of the next delivery: everything before it has been handed over. */
  private head = 0;
  private scheduled = false;
  private overflowing = false;
  private readonly blocked = new Set<string>();
  private readonly drain = () => this.run();

  constructor(
    private readonly limit = Infinity,
    private readonly onOverflow?: (queue: DeliveryQueue) => void,
  ) {}

  /** Messages waiting for delivery. */
  get depth(): number {
    return this.targets.length - this.head;
  }

  push(target: Receiver, msg: Msg): void {
    if (this.blocked.size > 0 && this.blocked.has(tabOf(target)!)) return;
    this.targets.push(target);
    this.messages.push(msg);
    if (this.targets.length - this.head >= this.limit && !this.overflowing) {
      this.overflowing = true;
      try {
        this.onOverflow?.(this);
      } finally {
        this.overflowing = false;
      }
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  /** Waiting messages per tab, largest first. */
  tabsByDepth(): [string, number][] {
    const counts = new Map<string, number>();
    for (let i = this.head; i < this.targets.length; i++) {
      const tab = tabOf(this.targets[i]!) ?? '';
      counts.set(tab, (counts.get(tab) ?? 0) + 1);
    }
    return [...counts].sort((a, b) => b[1] - a[1]);
  }

  /** Drops the waiting messages for `tab` and every later one until `unblock(tab)`. */
  block(tab: string): number {
    this.blocked.add(tab);
    const targets: Receiver[] = [];
    const messages: Msg[] = [];
    for (let i = this.head; i < this.targets.length; i++) {
      const target = this.targets[i]!;
      if (this.blocked.has(tabOf(target)!)) continue;
      targets.push(target);
      messages.push(this.messages[i]!);
    }
    const dropped = this.targets.length - this.head - targets.length;
    this.targets = targets;
    this.messages = messages;
    this.head = 0;
    return dropped;
  }

  /** Drops every waiting message. */
  clear(): void {
    this.targets = [];
    this.messages = [];
    this.head = 0;
  }

  unblock(tab: string): void {
    this.blocked.delete(tab);
  }

  private run(): void {
    const deadline = performance.now() + SLICE_MS;
    let n = 0;
    try {
      while (this.head < this.targets.length) {
        const i = this.head++;
        const target = this.targets[i]!;
        const msg = this.messages[i]!;
        // The delivered slots are released at once: a long queue must not pin what it has handed over.
        this.targets[i] = undefined;
        this.messages[i] = undefined;
        target._deliver(msg);
        if (++n % CLOCK_EVERY === 0 && performance.now() >= deadline) break;
      }
    } finally {
      // Even if a delivery threw past the node's own error handling, the queue must keep moving.
      this.compact();
      this.scheduled = this.head < this.targets.length;
      if (this.scheduled) setImmediate(this.drain);
    }
  }

  private compact(): void {
    if (this.head === this.targets.length) {
      this.targets = [];
      this.messages = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AT && this.head * 2 >= this.targets.length) {
      this.targets = this.targets.slice(this.head);
      this.messages = this.messages.slice(this.head);
      this.head = 0;
    }
  }
}
