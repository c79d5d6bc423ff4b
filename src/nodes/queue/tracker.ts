import type { EventEmitter } from 'node:events';
import type { Hooks, Msg } from '../../runtime/red-api/red-api-types.js';

/**
 * When has the flow after a `queue in` node finished a message? Node-RED's completion semantics,
 * followed by message id through the runtime's message hooks: a delivery on its way counts from
 * `preDeliver` until the node receives it (`onReceive`), and a node holding it counts from then
 * until it calls `done` (`onComplete`). When nothing counts any more, every node the message (or a
 * message derived from it, which keeps its `_msgid`) reached has finished with it; a `done(err)`
 * anywhere fails it. The hooks are registered only while a queue in node exists, and only for the
 * messages it follows, so every other message keeps the hook-free path.
 *
 * A deploy that stops a node holding a message (or one it is on its way to) strands it: Node-RED
 * drops what a closing node held, so the message would otherwise wait for its timeout. Once the
 * stopped nodes have closed, stranded messages finish as `stranded`, to be handed out again.
 */

/** A node as the hooks name it: closed once a deploy stopped it. */
interface Holder {
  _closed: boolean;
}

interface Track {
  inTransit: number;
  running: number;
  /** The nodes the message is in or on its way to, each with how many times. */
  holders: Map<Holder, number>;
  error: unknown;
  finish: (result: Completion) => void;
}

export interface Completion {
  error: unknown;
  /** A deploy stopped a node that held the message: it did not finish, nor fail. */
  stranded?: boolean;
}

const LABEL = 'runnel-queue-in';

export class CompletionTracker {
  private readonly live = new Map<string, Track>();
  private users = 0;
  private readonly followed = (msg: Msg) => this.live.has(msg._msgid as string);
  private readonly strand = () => {
    for (const [id, t] of this.live) {
      if ([...t.holders.keys()].some((node) => node._closed)) {
        this.live.delete(id);
        t.finish({ error: undefined, stranded: true });
      }
    }
  };

  constructor(
    private readonly hooks: Hooks,
    private readonly events: EventEmitter,
  ) {}

  /** A queue in node starts or stops using the tracker. */
  use(): () => void {
    if (this.users++ === 0) {
      this.hooks.add(`preDeliver.${LABEL}`, (event: { msg: Msg; destination: { node?: Holder } }) => {
        const t = this.live.get(event.msg._msgid as string);
        if (!t) return;
        t.inTransit++;
        if (event.destination.node) hold(t, event.destination.node, 1);
      }, this.followed);
      this.hooks.add(`onReceive.${LABEL}`, (event: { msg: Msg; destination: { node: Holder } }) => {
        const t = this.live.get(event.msg._msgid as string);
        if (!t) return;
        // A delivery that did not go through preDeliver (a link's direct hand-over) just runs.
        if (t.inTransit > 0) t.inTransit--;
        else hold(t, event.destination.node, 1);
        t.running++;
      }, this.followed);
      this.hooks.add(`onComplete.${LABEL}`, (event: { msg: Msg; error?: unknown; node: { node: Holder } }) => {
        const id = event.msg._msgid as string;
        const t = this.live.get(id);
        if (!t) return;
        if (event.error && t.error === undefined) t.error = event.error;
        if (t.running > 0) t.running--;
        hold(t, event.node.node, -1);
        this.check(id, t);
      }, this.followed);
      this.events.on('flows:stopped', this.strand);
    }
    let used = true;
    return () => {
      if (!used) return;
      used = false;
      if (--this.users > 0) return;
      this.hooks.remove(`*.${LABEL}`);
      this.events.off('flows:stopped', this.strand);
      // What the last queue in node gave back when it stopped can no longer be followed.
      for (const t of this.live.values()) t.finish({ error: undefined, stranded: true });
      this.live.clear();
    };
  }

  /**
   * Follows the message with this id from now on; `send` sends it on. Resolves when every node it
   * reached has finished with it, or a deploy stranded it.
   */
  follow(id: string, send: () => void): Promise<Completion> {
    return new Promise((finish) => {
      const t: Track = { inTransit: 0, running: 0, holders: new Map(), error: undefined, finish };
      this.live.set(id, t);
      send();
      // Sent nowhere (no wires) or finished synchronously.
      this.check(id, t);
    });
  }

  /** Stops following a message (its time ran out), so late completions are not counted. */
  forget(id: string): void {
    this.live.delete(id);
  }

  private check(id: string, t: Track): void {
    if (t.inTransit > 0 || t.running > 0) return;
    if (this.live.get(id) !== t) return;
    this.live.delete(id);
    t.finish({ error: t.error });
  }
}

function hold(t: Track, node: Holder, by: 1 | -1): void {
  const count = (t.holders.get(node) ?? 0) + by;
  if (count > 0) t.holders.set(node, count);
  else t.holders.delete(node);
}
