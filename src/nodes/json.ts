/**
 * The JSON node: converts a message property between a JSON string (or a Buffer holding one) and
 * a value. `action` "" converts either way, "str" only to a string, "obj" only to a value; `pretty`
 * indents by 4.
 *
 * `msg.schema` is validated with ajv as Node-RED does (all errors, draft-06 meta schema, one ajv
 * shared by every json node): a valid message leaves without `msg.schema`, an invalid one fails
 * with ajv's error text and keeps the errors in `msg.schemaError`. ajv loads on the first schema.
 * As in Node-RED, validation reads `msg[property]` literally (a nested property path validates
 * `undefined`).
 */
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { lazy } from '../base/lazy.js';
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';

const AjvClass = lazy<typeof Ajv>('ajv');
const draft06 = lazy<object>('ajv/lib/refs/json-schema-draft-06.json');
let shared: Ajv | undefined;

function ajv(): Ajv {
  if (!shared) {
    shared = new (AjvClass())({ allErrors: true });
    shared.addMetaSchema(draft06());
  }
  return shared;
}

const SCHEMA_ERROR = 'JSON Schema error';

export default function (RED: RedApi) {
  class JSONNode extends RED.nodes.Node {
    action: string;
    property: string;
    indent: number;
    /** The last schema compiled, as JSON text ("null" when none), and its validator. */
    private schemaText = 'null';
    private compiled: ValidateFunction | null = null;

    constructor(config: NodeConfig) {
      super(config);
      this.action = String(config.action || '');
      this.property = String(config.property || 'payload');
      this.indent = config.pretty ? 4 : 0;
      this.on('input', (msg: Msg, send: SendFn, done: DoneFn) => this.convert(msg, send, done));
    }

    /** The validator for msg.schema, recompiled only when the schema's JSON text changes. */
    private validator(schema: unknown): ValidateFunction | null {
      const text = JSON.stringify(schema);
      if (text !== this.schemaText) {
        try {
          this.compiled = ajv().compile(schema as object);
          this.schemaText = text;
        } catch {
          this.compiled = null;
          this.schemaText = 'null';
          return null;
        }
      }
      return this.compiled;
    }

    /** Sends `msg` if `data` is valid; otherwise fails with ajv's errors, as Node-RED does. */
    private checked(validate: ValidateFunction, data: unknown, msg: Msg, send: SendFn, done: DoneFn, convert?: () => void): void {
      if (validate(data)) {
        convert?.();
        delete msg.schema;
        send(msg);
        done();
        return;
      }
      const errors = validate.errors as ErrorObject[];
      msg.schemaError = errors;
      done(`${SCHEMA_ERROR}: ${ajv().errorsText(errors)}`);
    }

    private convert(msg: Msg, send: SendFn, done: DoneFn): void {
      let validate: ValidateFunction | null = null;
      if (msg.schema) {
        validate = this.validator(msg.schema);
        if (!validate) {
          done(`${SCHEMA_ERROR}: failed to compile schema`);
          return;
        }
      }
      const value = RED.util.getMessageProperty(msg, this.property);
      if (value === undefined) {
        send(msg);
        done();
        return;
      }
      if (typeof value === 'string' || Buffer.isBuffer(value)) {
        if (this.action === 'str') {
          if (validate) {
            let parsed: unknown;
            try {
              parsed = JSON.parse(msg[this.property] as string);
            } catch (err) {
              // Node-RED 5 fails the message with the parser's message (4.x let the handler throw).
              done((err as Error).message);
              return;
            }
            this.checked(validate, parsed, msg, send, done);
          } else {
            send(msg);
            done();
          }
          return;
        }
        try {
          RED.util.setMessageProperty(msg, this.property, JSON.parse(value as string));
          if (validate) this.checked(validate, msg[this.property], msg, send, done);
          else {
            send(msg);
            done();
          }
        } catch (err) {
          done((err as Error).message);
        }
        return;
      }
      if (typeof value === 'object' || typeof value === 'boolean' || typeof value === 'number') {
        if (this.action === 'obj') {
          if (validate) this.checked(validate, value, msg, send, done);
          else {
            send(msg);
            done();
          }
          return;
        }
        try {
          const toString = () => RED.util.setMessageProperty(msg, this.property, JSON.stringify(value, null, this.indent));
          if (validate) this.checked(validate, value, msg, send, done, toString);
          else {
            toString();
            send(msg);
            done();
          }
        } catch {
          done('Failed to convert payload');
        }
        return;
      }
      this.warn('Ignored unsupported payload type');
      done();
    }
  }

  RED.nodes.registerType('json', JSONNode);
}
