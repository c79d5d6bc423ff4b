import { Node, type NodeConfig } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';

/** Status updates reach this node through the flow (src/runtime/flow.ts reads `scope`). */
class StatusNode extends Node {
  scope: string[] | null;

  constructor(config: NodeConfig) {
    super(config);
    this.scope = Array.isArray(config.scope) ? (config.scope as string[]) : null;
    if (config.scope === 'group') this.warn('scope "group" is not supported: reporting status from the whole flow');
    this.on('input', (msg, send, done) => {
      send(msg);
      done();
    });
  }
}

export default function (RED: RedApi) {
  RED.nodes.registerType('status', StatusNode);
}
