/**
 * Node-RED 5's `await node.linkcall(target, msg, {timeout, clone})` for function code: calls a
 * `link in` (by id, else by name, as a dynamic link call node finds it) and resolves with the
 * message its return-mode `link out` sends back. Every failure — a target that is not a string, a
 * message that is not an object, no such link in, no answer within `timeout` ms (5000 by
 * default) — is a rejection the code can catch; uncaught, it fails the message as a throw does.
 */
import { pushLinkSource, dropEmptyLinkSource, type LinkCaller } from '../lib/link-source.js';
import type { Msg, NodeInstance, RedApi } from '../../runtime/red-api/red-api-types.js';

const DEFAULT_TIMEOUT_MS = 5000;

interface PendingCall {
  resolve(msg: Msg): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

function callOptions(options: unknown): { timeout: number; clone: boolean } {
  if (options === undefined || options === null) return { timeout: DEFAULT_TIMEOUT_MS, clone: true };
  if (typeof options !== 'object') throw new Error('Error link call options parameter is not valid, expected an object');
  const { timeout, clone } = options as { timeout?: unknown; clone?: unknown };
  return { timeout: Number(timeout) > 0 ? Number(timeout) : DEFAULT_TIMEOUT_MS, clone: clone !== false };
}

export class LinkCalls implements LinkCaller {
  private readonly pending = new Map<string, PendingCall>();
  private sequence = 0;

  constructor(
    private readonly RED: RedApi,
    private readonly node: NodeInstance,
  ) {}

  /** Async, so that a bad argument rejects rather than throws. */
  async call(target: unknown, msg: unknown, options?: unknown): Promise<Msg> {
    if (typeof target !== 'string' || target.trim() === '') throw new Error('Error link call target parameter is not valid, expected a string');
    if (typeof msg !== 'object' || msg === null) throw new Error('Error link call msg parameter is not valid, expected an object');
    const { timeout, clone } = callOptions(options);
    // A node id names the link in directly; anything else is a name (Node-RED 5's rule).
    const byName = !this.RED.nodes.getNode(target);
    const linkIn = this.RED.nodes.linkcallTargets.getTargetNode(this.node, target, byName);
    const message = clone ? this.RED.util.cloneMessage(msg as Msg) : (msg as Msg);
    const id = `${this.node.id}:${++this.sequence}`;
    pushLinkSource(message, { id, node: this.node.id });
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error('timeout'));
      }, timeout);
      this.pending.set(id, { resolve, reject, timer });
      this.node._flow.services.queue.push(linkIn, message);
    });
  }

  /** A late answer (after the timeout) is dropped, as Node-RED drops it. */
  returnLinkMessage(id: string, msg: Msg): void {
    dropEmptyLinkSource(msg);
    const call = this.pending.get(id);
    if (!call) return;
    clearTimeout(call.timer);
    this.pending.delete(id);
    call.resolve(msg);
  }

  /** On close: no code of the node runs any more, so the calls are left unsettled. */
  clear(): void {
    for (const call of this.pending.values()) clearTimeout(call.timer);
    this.pending.clear();
  }
}
