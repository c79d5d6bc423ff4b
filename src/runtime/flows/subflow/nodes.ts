import { inspect } from 'node:util';
import { Node, type Msg, type NodeConfig, type NodeStatus } from '../node.js';
import type { LiveNode } from '../services.js';
import { cloneMessage } from '../../util/index.js';

/**
 * The node standing for a subflow instance on its parent flow: upstream nodes send to it, it is
 * what `RED.nodes.getNode(instanceId)` returns, and its status and errors are the instance's.
 * A message it receives goes straight to the internal nodes wired to the template's input, in
 * the same delivery, so an instance costs no extra hop on the way in (its outputs are wired
 * directly into the parent flow, so none on the way out either).
 */
export class SubflowInstanceNode extends Node {
  /** Internal node ids wired to the template's input. */
  inputTargets: string[] = [];
  /** Parent-flow ids reached by template inputs wired straight to an output. */
  passthroughTargets: string[] = [];
  /** Called after `updateWires`, so the instance rewires the internal nodes feeding its outputs. */
  onRewire: (() => void) | undefined;

  override _deliver(msg: Msg): void {
    if (this._closed) return;
    const nodes = this._flow.services.nodes;
    const passthrough = this.passthroughTargets;
    if (this.inputTargets.length === 1 && passthrough.length === 0) {
      nodes.get(this.inputTargets[0])?._deliver(msg);
      return;
    }
    const internal: LiveNode[] = [];
    for (const id of this.inputTargets) {
      const target = nodes.get(id);
      if (target) internal.push(target);
    }
    // Copies are taken before any delivery: an internal handler runs synchronously and may change msg.
    const copies = internal.map((_, i) => (i === 0 ? msg : cloneMessage(msg)));
    const queue = this._flow.services.queue;
    let sent = internal.length > 0;
    for (const id of passthrough) {
      const target = nodes.get(id);
      if (!target) continue;
      queue.push(target, sent ? cloneMessage(msg) : msg);
      sent = true;
    }
    for (let i = 0; i < internal.length; i++) internal[i]._deliver(copies[i]);
  }

  override updateWires(wires: string[][]): void {
    super.updateWires(wires);
    this.onRewire?.();
  }
}

const STATUS_KEYS = ['text', 'fill', 'shape'];

/**
 * The template's "status" port: messages internal nodes send to it set the instance node's
 * status, with Node-RED's reading of `msg.payload` (text, a status object, or anything inspected)
 * and `msg.status`.
 */
export class SubflowStatusNode extends Node {
  constructor(config: NodeConfig, instance: Node) {
    super(config);
    this.on('input', (msg: Msg) => {
      const status = statusFrom(msg);
      if (status) instance.status(status);
    });
  }
}

function statusFrom(msg: Msg): NodeStatus | undefined {
  const payload = msg.payload;
  if (payload !== undefined) {
    if (typeof payload === 'string') return { text: payload };
    if (Object.prototype.toString.call(payload) === '[object Object]') {
      const keys = Object.keys(payload);
      if (keys.length === 0 || STATUS_KEYS.some((k) => Object.hasOwn(payload, k))) return payload as NodeStatus;
    }
    const text = inspect(payload);
    return { text: text.length > 32 ? `${text.slice(0, 32)}...` : text };
  }
  const status = msg.status;
  if (status === undefined || status === null || typeof status !== 'object') return undefined;
  if (typeof status.text === 'string' && status.text.startsWith('common.')) return { ...status, text: `node-red:${status.text}` };
  return status as NodeStatus;
}
