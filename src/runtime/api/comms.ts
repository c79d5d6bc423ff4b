import type { Runtime } from '../runtime.js';
import type { NodeLogEntry } from '../flows/node.js';
import { encodeObject } from '../util/encode.js';
import type { PresenceUser } from '../multiplayer/location.js';

/** The runtime's events an editor is told of, by name, with what each carries. */
export interface EditorEvents {
  /** RED.comms.publish from a node or module; `origin`: the instance it came from, when another one of the cluster. */
  comms: { topic: string; data: unknown; retain?: boolean; origin?: string; session?: string; excludeSession?: string };
  /** A runtime notification (`runtime-deploy`, `runtime-state`, ...). */
  'runtime-event': { id: string; payload?: unknown; retain?: boolean; origin?: string };
  /** A node's status; empty when cleared. */
  'node-status': { id: string; status: Record<string, unknown>; origin?: string };
  /** A line of npm's output while a module installs. */
  'event-log': { id: string; payload: unknown };
  /** A node's warning or error. */
  'node-log': NodeLogEntry;
}

/** What the editor's websocket carries from the runtime: events, the retained state notice, node logs. */
export interface CommsApi {
  /** Calls `listener` on each `event` until the returned function is called. */
  on<E extends keyof EditorEvents>(event: E, listener: (e: EditorEvents[E]) => void): () => void;
  /** The current `runtime-state` notification (retained for editors that connect later). */
  stateNotice(): Record<string, unknown>;
  /** A node's log entry as the debug sidebar shows it, cut to `debugMaxLength`. */
  encodeLog(entry: NodeLogEntry): unknown;
  /** An editor's `{topic, data}` message on its websocket `session` (multiplayer presence). */
  receive(session: string, user: PresenceUser | undefined, topic: string, data: unknown): void;
  /** An editor's websocket `session` closed. */
  closed(session: string): void;
}

export function commsApi(runtime: Runtime): CommsApi {
  const maxLength = runtime.settings.extra.debugMaxLength;
  return {
    on: (event, listener) => {
      runtime.events.on(event, listener);
      return () => void runtime.events.off(event, listener);
    },
    stateNotice: () => runtime.stateNotice,
    encodeLog: (entry) => encodeObject({ ...entry }, { maxLength: typeof maxLength === 'number' ? maxLength : 1000 }),
    receive: (session, user, topic, data) => runtime.presence?.receive(session, user, topic, data),
    closed: (session) => runtime.presence?.closed(session),
  };
}
