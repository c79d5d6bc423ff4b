import { withoutWired } from './lib/scope.js';
import type { NodeConfig, RedApi } from '../runtime/red-api/red-api-types.js';

export default function (RED: RedApi) {
  /** Status updates reach this node through the flow (src/runtime/flows/flow.ts reads `scope`). */
  class StatusNode extends RED.nodes.Node {
    /** A list of node ids, "group" (the nodes of this node's group), or null for the whole flow. */
    scope: string[] | 'group' | null;

    constructor(config: NodeConfig) {
      super(config);
      this.scope = Array.isArray(config.scope) ? withoutWired(config.scope as string[], this.wires) : config.scope === 'group' ? 'group' : null;
      this.on('input', (msg, send, done) => {
        send(msg);
        done();
      });
    }
  }

  RED.nodes.registerType('status', StatusNode);
}
