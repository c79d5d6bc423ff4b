import type { EventEmitter } from 'node:events';
import type { ClusterRelay, RelayMessage } from '../../storage/contract.js';
import type { NodeLogEntry } from '../flows/node.js';
import { encodeObject } from '../util/encode.js';

/**
 * What the editors of every instance see of the others, through the cluster relay: debug output
 * (debug nodes and nodes' warnings and errors), node status, and warnings in another instance's
 * runtime state. Arrivals are emitted on the runtime's events as if local, with `origin` set, so
 * the editor bridge shows them and they are never relayed again.
 *
 * - Debug messages are tagged with their instance in `name`, which the unchanged sidebar shows as
 *   "node: [node1] name". The sidebar's 100 messages a second per node holds cluster-wide: what
 *   arrives beyond it for a node in the second, its local messages counted, is dropped. A message
 *   too large for the relay arrives as the start of its JSON, as a string.
 * - A node's status from another instance is shown only where the node does not run (a
 *   primary-only tab on a non-primary): where it runs, the editor shows this instance's own. So
 *   only the statuses of nodes on primary-only tabs are relayed.
 * - Another instance's runtime-state warning shows as notification `runtime-state-<instance>`,
 *   "<instance>: …", and closes when that instance's state is clear again.
 */

const RATE_WINDOW_MS = 1000;
const RATE_PER_NODE = 100;

export interface RelayedEventsDeps {
  relay: ClusterRelay;
  events: EventEmitter;
  /** Whether the node runs on this instance. */
  runsHere: (id: string) => boolean;
  /** Whether the node is on a primary-only tab: only such a node's status is shown elsewhere, so only its is relayed. */
  primaryOnly: (id: string) => boolean;
  debugMaxLength: number;
  now?: () => number;
}

interface Origin {
  origin?: string;
}

export class RelayedEvents {
  private readonly detach: (() => void)[] = [];
  private windowStart = 0;
  private readonly shown = new Map<string, number>();

  constructor(private readonly deps: RelayedEventsDeps) {}

  start(): void {
    const { relay, events } = this.deps;
    const on = <T>(event: string, listener: (e: T) => void) => {
      events.on(event, listener);
      this.detach.push(() => events.off(event, listener));
    };
    on<{ topic: string; data: unknown } & Origin>('comms', (e) => {
      // Arrivals were counted as they came.
      if (e.topic !== 'debug' || e.origin !== undefined) return;
      if (this.count(e.data)) relay.publish('debug', this.fit(e.data));
    });
    on<NodeLogEntry>('node-log', (e) => {
      // A node failing on every message is relayed as the sidebar would show it, not once per failure.
      if (!this.count(e)) return;
      relay.publish('debug', this.fit(encodeObject({ ...e }, { maxLength: this.deps.debugMaxLength })));
    });
    on<{ id: string; status: unknown } & Origin>('node-status', (e) => {
      if (e.origin === undefined && this.deps.primaryOnly(e.id)) relay.publish('status', { id: e.id, status: e.status });
    });
    on<{ id: string; payload?: unknown } & Origin>('runtime-event', (e) => {
      if (e.origin === undefined && e.id === 'runtime-state') relay.publish('state', e.payload ?? {});
    });
    this.detach.push(relay.onMessage((m) => this.arrived(m)));
  }

  stop(): void {
    for (const off of this.detach.splice(0)) off();
  }

  private arrived({ origin, kind, data }: RelayMessage): void {
    const { events } = this.deps;
    if (kind === 'debug' && isRecord(data)) {
      if (!this.count(data)) return;
      const name = typeof data.name === 'string' && data.name ? ` ${data.name}` : '';
      events.emit('comms', { topic: 'debug', data: { ...data, name: `[${origin}]${name}` }, origin });
    } else if (kind === 'status' && isRecord(data) && typeof data.id === 'string' && isRecord(data.status)) {
      if (!this.deps.runsHere(data.id)) events.emit('node-status', { id: data.id, status: data.status, origin });
    } else if (kind === 'state' && isRecord(data)) {
      events.emit('runtime-event', { id: `runtime-state-${origin.replace(/[^\w.-]/g, '_')}`, payload: stateWarning(origin, data), retain: true, origin });
    }
  }

  /** Counts a debug message of a node in the current second; false once the node is over its share. */
  private count(entry: unknown): boolean {
    const now = (this.deps.now ?? Date.now)();
    if (now - this.windowStart >= RATE_WINDOW_MS) {
      this.windowStart = now;
      this.shown.clear();
    }
    const id = isRecord(entry) && typeof entry.id === 'string' ? entry.id : '';
    const n = this.shown.get(id) ?? 0;
    if (n >= RATE_PER_NODE) return false;
    this.shown.set(id, n + 1);
    return true;
  }

  /** A debug entry as it fits the relay: one too large keeps its start, as a string. */
  private fit(entry: unknown): unknown {
    const json = JSON.stringify(entry) ?? '';
    const max = this.deps.relay.maxMessageBytes;
    if (Buffer.byteLength(json) <= max || !isRecord(entry)) return entry;
    const text = typeof entry.msg === 'string' ? entry.msg : JSON.stringify(entry.msg) ?? '';
    // Characters are up to 3 bytes in JSON (escaped ones 6); half the budget leaves room for the rest of the entry.
    const keep = Math.floor(max / 12);
    return { ...entry, msg: `${text.slice(0, keep)}...`, format: `string[${text.length}]` };
  }
}

/** Another instance's runtime-state notice as the editor shows a notification: its warning, or nothing (which closes it). */
function stateWarning(origin: string, state: Record<string, unknown>): Record<string, unknown> {
  if (typeof state.text !== 'string') return {};
  const types = Array.isArray(state.types) ? `: ${state.types.join(', ')}` : '';
  const what = state.error === 'missing-types' ? `flows stopped, node types missing${types}` : state.error === 'credentials_load_failed' ? 'credentials could not be decrypted' : String(state.error ?? state.text);
  return { type: 'warning', text: `${origin}: ${what}` };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
