import type { NodeConfig, RedApi } from '../runtime/red-api/red-api-types.js';

export default function (RED: RedApi) {
  /**
   * Errors reach this node through the flow (src/runtime/flows/flow.ts reads `scope` and `uncaught`);
   * the node itself only passes them on.
   */
  class CatchNode extends RED.nodes.Node {
    /** A list of node ids, "group" (the nodes of this node's group), or null for the whole flow. */
    scope: string[] | 'group' | null;
    uncaught: boolean;

    constructor(config: NodeConfig) {
      super(config);
      this.scope = Array.isArray(config.scope) ? (config.scope as string[]) : config.scope === 'group' ? 'group' : null;
      this.uncaught = config.uncaught === true;
      this.on('input', (msg, send, done) => {
        send(msg);
        done();
      });
    }
  }

  RED.nodes.registerType('catch', CatchNode);
}
