import type { Node, Msg } from './node.js';
import { cloneMessage, generateId } from './util/index.js';

/**
 * The message path while RED.hooks has a message hook registered: Node-RED's sequence
 * onSend → preRoute → (clone) → preDeliver → queue → postDeliver, and onReceive/postReceive around
 * the input handlers. Only taken when a hook exists, so the ordinary path stays allocation-light.
 */

interface SendEvent {
  msg: Msg;
  source: { id: string; node: Node; port: number };
  destination: { id: string; node: Node | undefined };
  cloneMessage: boolean;
}

/** A hook result: undefined = continue, false = stop quietly, anything else = an error. */
function failed(node: Node, result: unknown, msg: Msg): boolean {
  if (result === undefined) return false;
  if (result !== false) node.error(result, msg);
  return true;
}

export function sendWithHooks(node: Node, msg: unknown): void {
  const outputs = Array.isArray(msg) ? msg : [msg];
  const events: SendEvent[] = [];
  let msgid: string | undefined;
  for (let port = 0; port < Math.min(outputs.length, node.wires.length); port++) {
    const out = outputs[port];
    if (out === null || out === undefined) continue;
    for (const m of Array.isArray(out) ? out : [out]) {
      if (m === null || m === undefined) continue;
      if (typeof m !== 'object') {
        node.error(new Error('Non-message object returned'), undefined);
        continue;
      }
      msgid ??= (m as Msg)._msgid ?? generateId();
      if ((m as Msg)._msgid === undefined) (m as Msg)._msgid = msgid;
      for (const id of node.wires[port]) {
        events.push({ msg: m as Msg, source: { id: node.id, node, port }, destination: { id, node: undefined }, cloneMessage: events.length > 0 });
      }
    }
  }
  if (events.length === 0) return;
  const hooks = node._flow.engine.hooks;
  hooks.trigger('onSend', events, (result) => {
    if (failed(node, result, events[0].msg)) return;
    for (const event of events) route(node, event);
  });
}

function route(node: Node, event: SendEvent): void {
  const engine = node._flow.engine;
  engine.hooks.trigger('preRoute', event, (result) => {
    if (failed(node, result, event.msg)) return;
    const target = engine.nodes.get(event.destination.id);
    if (!target) return;
    event.destination.node = target;
    if (event.cloneMessage) event.msg = cloneMessage(event.msg);
    engine.hooks.trigger('preDeliver', event, (delivered) => {
      if (failed(node, delivered, event.msg)) return;
      engine.queue.push(target, event.msg);
      engine.hooks.trigger('postDeliver', event, () => {});
    });
  });
}

/** Runs a node's input handlers between the onReceive and postReceive hooks. */
export function receiveWithHooks(node: Node, msg: Msg, runHandlers: () => void): void {
  const hooks = node._flow.engine.hooks;
  const event = { msg, destination: { id: node.id, node } };
  hooks.trigger('onReceive', event, (result) => {
    if (failed(node, result, msg)) return;
    runHandlers();
    hooks.trigger('postReceive', event, () => {});
  });
}
