import { performance } from 'node:perf_hooks';
import type { Msg } from './red-api-types.js';

/** Whatever takes delivered messages: a live node. */
export interface Receiver {
  _deliver(msg: Msg): void;
}

/** How long one drain may keep delivering before it yields to I/O and timers. */
const SLICE_MS = 1;

/**
 * Asynchronous message delivery with Node-RED's ordering: a message sent now is handled after the
 * current handler returns, in send order (FIFO across the whole runtime). Node-RED pays one
 * setImmediate — one event-loop turn — per delivery. Here deliveries are queued and drained in
 * batches, and a drain keeps taking what the batch itself queued for up to SLICE_MS before it
 * yields, so a message passing through a chain of nodes does not wait for a loop turn at every
 * hop, while I/O and timers still get the loop at least every millisecond.
 */
export class DeliveryQueue {
  private targets: Receiver[] = [];
  private messages: Msg[] = [];
  private scheduled = false;
  private readonly drain = () => this.run();

  /** Messages waiting for delivery. */
  get depth(): number {
    return this.targets.length;
  }

  push(target: Receiver, msg: Msg): void {
    this.targets.push(target);
    this.messages.push(msg);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  private run(): void {
    const deadline = performance.now() + SLICE_MS;
    try {
      do {
        const targets = this.targets;
        const messages = this.messages;
        this.targets = [];
        this.messages = [];
        for (let i = 0; i < targets.length; i++) targets[i]._deliver(messages[i]);
      } while (this.targets.length > 0 && performance.now() < deadline);
    } finally {
      // Even if a delivery threw past the node's own error handling, the queue must keep moving.
      this.scheduled = this.targets.length > 0;
      if (this.scheduled) setImmediate(this.drain);
    }
  }
}
