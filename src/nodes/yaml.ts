/** The yaml node: a YAML string on `property` becomes a value, and an object becomes YAML. */
import type * as Yaml from 'js-yaml';
import { lazy } from '../base/lazy.js';

const yaml = lazy<typeof Yaml>('js-yaml');
import type { DoneFn, Msg, NodeConfig, RedApi, SendFn } from '../runtime/red-api/red-api-types.js';
import { onPropertyInput } from './lib/property-input.js';

export default function (RED: RedApi) {
  class YamlNode extends RED.nodes.Node {
    private readonly property: string;
    private readonly propertyOut: string;

    constructor(config: NodeConfig) {
      super(config);
      this.property = (config.property as string) || 'payload';
      this.propertyOut = (config.propertyOut as string) || this.property;
      onPropertyInput(RED, this, this.property, (value: any, msg: Msg, send: SendFn, done: DoneFn) => {
        let out: unknown;
        if (typeof value === 'string') {
          try {
            out = yaml().load(value);
          } catch (err) {
            done((err as Error).message);
            return;
          }
        } else if (typeof value === 'object' && !Buffer.isBuffer(value)) {
          // null included: Node-RED dumps it as "null\n".
          try {
            out = yaml().dump(value);
          } catch {
            done('Failed to convert payload');
            return;
          }
        } else {
          this.warn(Buffer.isBuffer(value) ? 'Ignored non-object payload' : 'Ignored unsupported payload type');
          done();
          return;
        }
        RED.util.setMessageProperty(msg, this.propertyOut, out);
        send(msg);
        done();
      });
    }
  }

  RED.nodes.registerType('yaml', YamlNode);
}
