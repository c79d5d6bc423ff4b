import type { TestServer } from './server.js';
import { createRedApi } from '../../src/runtime/red-api/red-api.js';
import type { Msg, Node, NodeConfig } from '../../src/runtime/flows/node.js';

export interface Capture {
  /** Messages received by `test-capture` nodes, by node name (or id when unnamed). */
  messages: Map<string, Msg[]>;
  /** Constructions of `test-capture` nodes, by node id (restart observations). */
  starts: Map<string, number>;
  closes: Map<string, { removed: boolean }[]>;
  /** `this.credentials` each `test-capture` node saw when it was constructed, by node id. */
  credentials: Map<string, Record<string, unknown> | undefined>;
  of(name: string): Msg[];
  /** Ids of `test-capture` nodes constructed since the previous call (or since installCapture), sorted. */
  restartedSince(): string[];
  /** Waits until `name` has received at least `count` messages (bounded generously, as `eventually`). */
  waitFor(name: string, count?: number, ms?: number): Promise<Msg[]>;
}

/**
 * Registers a `test-capture` node type on a running server: it records what it receives, when it
 * starts and how it closes, so tests can observe flows through the real runtime.
 */
export function installCapture(server: TestServer): Capture {
  const runtime = server.instance.runtime;
  const messages = new Map<string, Msg[]>();
  const starts = new Map<string, number>();
  const closes = new Map<string, { removed: boolean }[]>();
  const credentials = new Map<string, Record<string, unknown> | undefined>();
  if (!runtime.registry.modules.has('test-helpers')) runtime.registry.addModule({ name: 'test-helpers', version: '1.0.0', builtin: false });
  const set = runtime.registry.addSet('test-helpers', 'capture');
  const RED = createRedApi(runtime, set);
  function CaptureNode(this: Node, config: NodeConfig) {
    RED.nodes.createNode(this, config);
    const key = (config.name as string) || config.id;
    starts.set(config.id, (starts.get(config.id) ?? 0) + 1);
    credentials.set(config.id, this.credentials);
    this.on('input', (msg: Msg, send: (m: Msg) => void, done: () => void) => {
      const list = messages.get(key) ?? [];
      list.push(msg);
      messages.set(key, list);
      if (config.passthrough) send(msg);
      done();
    });
    this.on('close', (removed: boolean, done: () => void) => {
      const list = closes.get(config.id) ?? [];
      list.push({ removed });
      closes.set(config.id, list);
      done();
    });
  }
  RED.nodes.registerType('test-capture', CaptureNode as never, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
  const of = (name: string) => messages.get(name) ?? [];
  let seen = new Map<string, number>();
  return {
    messages,
    starts,
    closes,
    credentials,
    of,
    restartedSince() {
      const now = new Map(starts);
      const changed = [...now].filter(([id, n]) => (seen.get(id) ?? 0) !== n).map(([id]) => id).sort();
      seen = now;
      return changed;
    },
    async waitFor(name, count = 1, ms = 30_000) {
      const end = Date.now() + ms;
      while (of(name).length < count) {
        if (Date.now() > end) throw new Error(`capture ${name}: ${of(name).length} of ${count} messages after ${ms} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return of(name);
    },
  };
}
