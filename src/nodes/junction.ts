import type { NodeConfig, RedApi } from '../runtime/red-api/red-api-types.js';

export default function (RED: RedApi) {
  /** A wiring point: every message leaves unchanged on the single output. */
  class JunctionNode extends RED.nodes.Node {
    constructor(config: NodeConfig) {
      super(config);
      this.on('input', (msg) => this.send(msg));
    }
  }

  RED.nodes.registerType('junction', JunctionNode);
}
