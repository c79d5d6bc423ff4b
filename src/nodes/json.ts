/**
 * The JSON node: converts a message property between a JSON string and a value. `action` ""
 * converts either way, "str" only to a string, "obj" only to a value; `pretty` indents by 4.
 *
 * JSON Schema validation (msg.schema) needs a schema validator Runnel does not ship; a message
 * asking for it fails with an error rather than passing unvalidated.
 */
import { Node, type DoneFn, type Msg, type NodeConfig, type SendFn } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';

export default function (RED: RedApi) {
  class JSONNode extends Node {
    action: string;
    property: string;
    indent: number;

    constructor(config: NodeConfig) {
      super(config);
      this.action = String(config.action || '');
      this.property = String(config.property || 'payload');
      this.indent = config.pretty ? 4 : 0;
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.convert(msg, send, done));
    }

    private convert(msg: Msg, send: SendFn, done: DoneFn): void {
      if (msg.schema) {
        done('JSON Schema validation (msg.schema) is not supported');
        return;
      }
      const value = RED.util.getMessageProperty(msg, this.property);
      if (value === undefined) {
        send(msg);
        done();
        return;
      }
      if (typeof value === 'string') {
        if (this.action !== 'str') {
          try {
            RED.util.setMessageProperty(msg, this.property, JSON.parse(value));
          } catch (err) {
            done((err as Error).message);
            return;
          }
        }
        send(msg);
        done();
        return;
      }
      if (typeof value === 'object' || typeof value === 'boolean' || typeof value === 'number') {
        if (this.action === 'obj') {
          send(msg);
          done();
          return;
        }
        if (Buffer.isBuffer(value)) {
          this.warn('Ignored non-object payload');
          done();
          return;
        }
        try {
          RED.util.setMessageProperty(msg, this.property, JSON.stringify(value, null, this.indent));
        } catch {
          done('Error converting object to JSON string');
          return;
        }
        send(msg);
        done();
        return;
      }
      this.warn('Ignored unsupported payload type');
      done();
    }
  }

  RED.nodes.registerType('json', JSONNode);
}
