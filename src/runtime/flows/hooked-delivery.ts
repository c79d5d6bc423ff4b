import type { Msg } from '../red-api/red-api-types.js';
import type { LiveNode } from './services.js';
import { cloneMessage, generateId } from '../util/index.js';

/**
 * The message path while RED.hooks has a message hook registered: Node-RED's sequence
 * onSend → preRoute → (clone) → preDeliver → queue → postDeliver, and onReceive/postReceive around
 * the input handlers. Only taken when a hook exists, so the ordinary path stays allocation-light.
 */

interface SendEvent {
  msg: Msg;
  source: { id: string; node: LiveNode; port: number };
  destination: { id: string; node: LiveNode | undefined };
  cloneMessage: boolean;
}

/** A hook result: undefined = continue, false = stop quietly, anything else = an error. */
function failed(node: LiveNode, result: unknown, msg: Msg): boolean {
  if (result === undefined) return false;
  if (result !== false) node.error(result, msg);
  return true;
}

export function sendWithHooks(node: LiveNode, msg: unknown): void {
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
  const hooks = node._flow.services.hooks;
  hooks.trigger('onSend', events, (result) => {
    if (failed(node, result, events[0].msg)) return;
    for (const event of events) route(node, event);
  });
}

function route(node: LiveNode, event: SendEvent): void {
  const services = node._flow.services;
  services.hooks.trigger('preRoute', event, (result) => {
    if (failed(node, result, event.msg)) return;
    const target = services.nodes.get(event.destination.id);
    if (!target) return;
    event.destination.node = target;
    if (event.cloneMessage) event.msg = cloneMessage(event.msg);
    services.hooks.trigger('preDeliver', event, (delivered) => {
      if (failed(node, delivered, event.msg)) return;
      services.queue.push(target, event.msg);
      // Counted as on the ordinary path: one per delivery a hook let through.
      node._stats.sent++;
      services.hooks.trigger('postDeliver', event, () => {});
    });
  });
}

/** Runs a node's input handlers between the onReceive and postReceive hooks. */
export function receiveWithHooks(node: LiveNode, msg: Msg, runHandlers: () => void): void {
  const hooks = node._flow.services.hooks;
  const event = { msg, destination: { id: node.id, node } };
  hooks.trigger('onReceive', event, (result) => {
    if (failed(node, result, msg)) return;
    runHandlers();
    hooks.trigger('postReceive', event, () => {});
  });
}
