import { withoutWired } from './lib/scope.js';
import type { NodeConfig, RedApi } from '../runtime/red-api/red-api-types.js';

export default function (RED: RedApi) {
  /**
   * Completions reach this node through the flow (src/runtime/flows/flow.ts reads `scope`); as in
   * Node-RED, a complete node with no scope watches nothing.
   */
  class CompleteNode extends RED.nodes.Node {
    scope: string[] | null;

    constructor(config: NodeConfig) {
      super(config);
      this.scope = Array.isArray(config.scope) ? withoutWired(config.scope as string[], this.wires) : null;
      this.on('input', (msg, send, done) => {
        send(msg);
        done();
      });
    }
  }

  RED.nodes.registerType('complete', CompleteNode);
}
