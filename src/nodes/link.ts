import type { Held } from './lib/held.js';
import { dropEmptyLinkSource, pushLinkSource, type LinkCaller, type LinkSource } from './lib/link-source.js';
import type { Msg, NodeConfig, NodeInstance, RedApi } from '../runtime/red-api/red-api-types.js';

const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** `msg` is the message as it entered the call, for the timeout error. */
interface PendingCall extends Held {
  timer: NodeJS.Timeout;
}

function idList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' && value ? [value] : [];
}

export default function (RED: RedApi) {
  const targets = RED.nodes.linkcallTargets;

  const getLinkIn = (id: string): NodeInstance | undefined => {
    const node = RED.nodes.getNode(id);
    return node && node.type === 'link in' ? node : undefined;
  };

  class LinkInNode extends RED.nodes.Node {
    constructor(config: NodeConfig) {
      super(config);
      targets.register(this);
      this.on('close', () => targets.remove(this));
      this.on('input', (msg, send, done) => {
        send(msg);
        done();
      });
    }
  }

  class LinkOutNode extends RED.nodes.Node {
    /** Where messages go besides the wires (read by http in when a deploy replaces nodes). */
    linkTargets: readonly string[] = [];

    constructor(config: NodeConfig) {
      super(config);
      // Node-RED marks every message a link out passes on with the event it was sent under.
      const event = `node:${this.id}`;
      if (config.mode === 'return') {
        this.on('input', (msg, _send, done) => {
          msg._event = event;
          this.returnToCaller(msg);
          done();
        });
        return;
      }
      // Targets are looked up per message: they may live on another tab that was redeployed.
      const links = idList(config.links);
      this.linkTargets = links;
      this.on('input', (msg, _send, done) => {
        msg._event = event;
        const queue = this._flow.services.queue;
        let first = true;
        for (const id of links) {
          const target = getLinkIn(id);
          if (!target) continue;
          queue.push(target, first ? msg : RED.util.cloneMessage(msg));
          first = false;
        }
        done();
      });
    }

    /** The caller is a link call node or a function node that called node.linkcall(). */
    private returnToCaller(msg: Msg): void {
      const stack = msg._linkSource as LinkSource[] | undefined;
      const source = Array.isArray(stack) ? stack.pop() : undefined;
      const caller = source ? (RED.nodes.getNode(source.node) as (NodeInstance & Partial<LinkCaller>) | null) : null;
      if (source && typeof caller?.returnLinkMessage === 'function') caller.returnLinkMessage(source.id, msg);
      else this.warn('Missing return node information');
    }
  }

  class LinkCallNode extends RED.nodes.Node implements LinkCaller {
    private readonly pending = new Map<string, PendingCall>();
    private sequence = 0;
    /** Where messages go besides the wires (read by http in when a deploy replaces nodes). */
    linkTargets: readonly string[] = [];
    targetsAnyLinkIn = false;

    constructor(config: NodeConfig) {
      super(config);
      const seconds = parseFloat(String(config.timeout ?? ''));
      const timeout = seconds > 0 ? seconds * 1000 : DEFAULT_CALL_TIMEOUT_MS;
      const dynamic = config.linkType === 'dynamic';
      const staticTarget = idList(config.links)[0];
      this.targetsAnyLinkIn = dynamic;
      if (!dynamic && staticTarget) this.linkTargets = [staticTarget];
      this.on('input', (msg, send, done) => {
        let target: NodeInstance;
        try {
          target = targets.getTargetNode(this, dynamic ? msg.target : staticTarget, dynamic);
        } catch (err) {
          done(err);
          return;
        }
        const id = `${this.id}:${++this.sequence}`;
        const timer = setTimeout(() => this.timedOut(id), timeout);
        this.pending.set(id, { msg: RED.util.cloneMessage(msg), send, done, timer });
        pushLinkSource(msg, { id, node: this.id });
        this._flow.services.queue.push(target, msg);
      });
      this.on('close', () => {
        for (const call of this.pending.values()) clearTimeout(call.timer);
        this.pending.clear();
      });
    }

    returnLinkMessage(id: string, msg: Msg): void {
      dropEmptyLinkSource(msg);
      const call = this.pending.get(id);
      if (!call) {
        this.send(msg);
        return;
      }
      clearTimeout(call.timer);
      this.pending.delete(id);
      call.send(msg);
      call.done();
    }

    private timedOut(id: string): void {
      const call = this.pending.get(id);
      if (!call) return;
      this.pending.delete(id);
      // Node-RED reports the message as it was when the call was made, with the bare text.
      this.error('timeout', call.msg);
    }
  }

  RED.nodes.registerType('link in', LinkInNode);
  RED.nodes.registerType('link out', LinkOutNode);
  RED.nodes.registerType('link call', LinkCallNode);
}
