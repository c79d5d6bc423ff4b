import type { Runtime } from '../../runtime/runtime.js';
import type { CommsServer } from './comms-server.js';
import type { NodeLogEntry } from '../../runtime/flows/node.js';
import { encodeObject } from '../../runtime/util/encode.js';

interface CommsEvent {
  topic: string;
  data: unknown;
  retain?: boolean;
}
interface RuntimeEvent {
  id: string;
  payload?: unknown;
  retain?: boolean;
}
interface StatusEvent {
  id: string;
  status: Record<string, unknown>;
}

/**
 * Carries the runtime's events to the editors on /comms, with Node-RED's topics: RED.comms.publish
 * as is, runtime events as `notification/<id>`, node status as retained `status/<id>` (a newly
 * opened editor shows every status), the retained `notification/runtime-deploy` after each start
 * or deploy, the runtime's `notification/runtime-state` (with its warnings) as it stands when the
 * bridge is made, npm's output while modules install as `event-log/<id>`, and nodes' warnings and
 * errors on `debug`, as Node-RED's debug node forwards its log (the sidebar shows them with the node,
 * a function's syntax error included). Returns the function that detaches it.
 */
export function bridgeRuntimeToComms(runtime: Runtime, comms: CommsServer): () => void {
  const events = runtime.events;
  const onComms = (e: CommsEvent) => comms.publish(e.topic, e.data, e.retain === true);
  const onRuntimeEvent = (e: RuntimeEvent) => comms.publish(`notification/${e.id}`, e.payload ?? {}, e.retain === true);
  const onStatus = (e: StatusEvent) => {
    const topic = `status/${e.id}`;
    const empty = !e.status || Object.keys(e.status).length === 0;
    // Retained while shown, forgotten once cleared, so removed nodes leave nothing behind.
    comms.publish(topic, e.status ?? {}, !empty);
    if (empty) comms.forget(topic);
  };
  const onStarted = () => comms.publish('notification/runtime-deploy', { revision: runtime.rev }, true);
  const onEventLog = (e: { id: string; payload: unknown }) => comms.publish(`event-log/${e.id}`, e.payload);
  const maxLength = runtime.settings.extra.debugMaxLength;
  const onNodeLog = (e: NodeLogEntry) => {
    // A node failing on every message must not pay for encoding what no editor is there to see.
    if (comms.hasSubscriber('debug')) comms.publish('debug', encodeObject({ ...e }, { maxLength: typeof maxLength === 'number' ? maxLength : 1000 }));
  };
  events.on('comms', onComms);
  events.on('runtime-event', onRuntimeEvent);
  events.on('node-status', onStatus);
  events.on('flows:started', onStarted);
  events.on('event-log', onEventLog);
  events.on('node-log', onNodeLog);
  onStarted();
  comms.publish('notification/runtime-state', runtime.stateNotice, true);
  return () => {
    events.off('comms', onComms);
    events.off('runtime-event', onRuntimeEvent);
    events.off('node-status', onStatus);
    events.off('flows:started', onStarted);
    events.off('event-log', onEventLog);
    events.off('node-log', onNodeLog);
  };
}
