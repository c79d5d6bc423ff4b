import { Node, type NodeConfig } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';

/** Status updates reach this node through the flow (src/runtime/flow.ts reads `scope`). */
class StatusNode extends Node {
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

/**
 * Node-RED drops the nodes this one is wired to from its scope, so a directly connected node
 * cannot loop. Its walk steps past the entry after each one it removes; kept so the same
 * configurations watch the same nodes.
 */
function withoutWired(scope: string[], wires: string[][]): string[] {
  const wired = new Set(wires.flat());
  const kept = [...scope];
  for (let i = 0; i < kept.length; i++) {
    if (wired.has(kept[i])) kept.splice(i, 1);
  }
  return kept;
}

export default function (RED: RedApi) {
  RED.nodes.registerType('status', StatusNode);
}
