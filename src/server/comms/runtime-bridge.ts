import type { AdminApi } from '../../runtime/api/index.js';
import type { EditorEvents } from '../../runtime/api/comms.js';
import type { CommsServer } from './comms-server.js';

/**
 * Carries the runtime's events to the editors on /comms, with Node-RED's topics: RED.comms.publish
 * as is, runtime events as `notification/<id>` (the retained runtime-deploy among them, once per
 * deploy and at load), node status as retained `status/<id>` (a newly opened editor shows every
 * status), the runtime's `notification/runtime-state` (with its warnings) as it stands when the
 * bridge is made, npm's output while modules install as `event-log/<id>`, and nodes' warnings and
 * errors on `debug`, as Node-RED's debug node forwards its log (the sidebar shows them with the node,
 * a function's syntax error included); and the editors' own messages (multiplayer) back to the
 * runtime. Returns the function that detaches it.
 */
export function bridgeRuntimeToComms(admin: Pick<AdminApi, 'comms'>, comms: CommsServer): () => void {
  const events = admin.comms;
  const onComms = (e: EditorEvents['comms']) => comms.publish(e.topic, e.data, e.retain === true, { session: e.session, excludeSession: e.excludeSession });
  const onRuntimeEvent = (e: EditorEvents['runtime-event']) => comms.publish(`notification/${e.id}`, e.payload ?? {}, e.retain === true);
  const onStatus = (e: EditorEvents['node-status']) => {
    const topic = `status/${e.id}`;
    const empty = !e.status || Object.keys(e.status).length === 0;
    // Retained while shown, forgotten once cleared, so removed nodes leave nothing behind.
    comms.publish(topic, e.status ?? {}, !empty);
    if (empty) comms.forget(topic);
  };
  const onEventLog = (e: EditorEvents['event-log']) => comms.publish(`event-log/${e.id}`, e.payload);
  const onNodeLog = (e: EditorEvents['node-log']) => {
    // A node failing on every message must not pay for encoding what no editor is there to see.
    if (comms.hasSubscriber('debug')) comms.publish('debug', events.encodeLog(e));
  };
  const detach = [
    events.on('comms', onComms),
    events.on('runtime-event', onRuntimeEvent),
    events.on('node-status', onStatus),
    events.on('event-log', onEventLog),
    events.on('node-log', onNodeLog),
  ];
  comms.publish('notification/runtime-state', events.stateNotice(), true);
  comms.handleClients({ message: (session, user, topic, data) => events.receive(session, user, topic, data), closed: (session) => events.closed(session) });
  return () => {
    comms.handleClients(undefined);
    for (const off of detach) off();
  };
}
