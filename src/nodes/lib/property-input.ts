import type { DoneFn, Msg, NodeInstance, RedApi, SendFn } from '../../runtime/red-api/red-api-types.js';

type Handler = (value: unknown, msg: Msg, send: SendFn, done: DoneFn) => void;

/**
 * The parser nodes' input (html, xml, yaml): the configured property's value, or, when the
 * message has none, the message passed on unchanged, as Node-RED's parsers do.
 */
export function onPropertyInput(RED: RedApi, node: NodeInstance, property: string, handle: Handler): void {
  node.on('input', (msg: Msg, send: SendFn, done: DoneFn) => {
    const value: unknown = RED.util.getMessageProperty(msg, property);
    if (value === undefined) {
      send(msg);
      done();
      return;
    }
    handle(value, msg, send, done);
  });
}
