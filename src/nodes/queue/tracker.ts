import type { Hooks, Msg } from '../../runtime/red-api/red-api-types.js';

/**
 * When has the flow after a `queue in` node finished a message? Node-RED's completion semantics,
 * followed by message id through the runtime's message hooks: a delivery on its way counts from
 * `preDeliver` until the node receives it (`onReceive`), and a node holding it counts from then
 * until it calls `done` (`onComplete`). When nothing counts any more, every node the message (or a
 * message derived from it, which keeps its `_msgid`) reached has finished with it; a `done(err)`
 * anywhere fails it. The hooks are registered only while a queue in node exists, so flows without
 * one keep the hook-free message path.
 */

interface Track {
  inTransit: number;
  running: number;
  error: unknown;
  finish: (result: { error: unknown }) => void;
}

const LABEL = 'runnel-queue-in';

export class CompletionTracker {
  private readonly live = new Map<string, Track>();
  private users = 0;

  constructor(private readonly hooks: Hooks) {}

  /** A queue in node starts or stops using the tracker. */
  use(): () => void {
    if (this.users++ === 0) {
      this.hooks.add(`preDeliver.${LABEL}`, (event: { msg: Msg }) => {
        const t = this.live.get(event.msg._msgid as string);
        if (t) t.inTransit++;
      });
      this.hooks.add(`onReceive.${LABEL}`, (event: { msg: Msg }) => {
        const t = this.live.get(event.msg._msgid as string);
        if (!t) return;
        // A delivery that did not go through preDeliver (a link's direct hand-over) just runs.
        if (t.inTransit > 0) t.inTransit--;
        t.running++;
      });
      this.hooks.add(`onComplete.${LABEL}`, (event: { msg: Msg; error?: unknown }) => {
        const id = event.msg._msgid as string;
        const t = this.live.get(id);
        if (!t) return;
        if (event.error && t.error === undefined) t.error = event.error;
        if (t.running > 0) t.running--;
        this.check(id, t);
      });
    }
    let used = true;
    return () => {
      if (!used) return;
      used = false;
      if (--this.users === 0) this.hooks.remove(`*.${LABEL}`);
    };
  }

  /**
   * Follows the message with this id from now on; `send` sends it on. Resolves when every node it
   * reached has finished with it.
   */
  follow(id: string, send: () => void): Promise<{ error: unknown }> {
    return new Promise((finish) => {
      const t: Track = { inTransit: 0, running: 0, error: undefined, finish };
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
