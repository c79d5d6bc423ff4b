import { Node, type NodeConfig } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api-types.js';

/** A wiring point: every message leaves unchanged on the single output. */
class JunctionNode extends Node {
  constructor(config: NodeConfig) {
    super(config);
    this.on('input', (msg) => this.send(msg));
  }
}

export default function (RED: RedApi) {
  RED.nodes.registerType('junction', JunctionNode);
}
