import { Node, type NodeConfig } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api-types.js';
import { withoutWired } from './lib/scope.js';

/**
 * Completions reach this node through the flow (src/runtime/flow.ts reads `scope`); as in
 * Node-RED, a complete node with no scope watches nothing.
 */
class CompleteNode extends Node {
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

export default function (RED: RedApi) {
  RED.nodes.registerType('complete', CompleteNode);
}
