import type { Node, Msg } from './node.js';

/**
 * Asynchronous message delivery with Node-RED's ordering: a message sent now is handled after
 * the current handler returns, in send order. Instead of one setImmediate per delivery (Node-RED),
 * deliveries are queued and drained in batches; a batch only takes what was queued before it
 * started, so a message loop still yields to I/O between hops exactly as setImmediate would.
 */
export class DeliveryQueue {
  private targets: Node[] = [];
  private messages: Msg[] = [];
  private scheduled = false;
  private readonly drain = () => this.run();

  push(target: Node, msg: Msg): void {
    this.targets.push(target);
    this.messages.push(msg);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  private run(): void {
    const targets = this.targets;
    const messages = this.messages;
    this.targets = [];
    this.messages = [];
    this.scheduled = false;
    for (let i = 0; i < targets.length; i++) targets[i]._deliver(messages[i]);
  }
}
