import { Node, type NodeConfig } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';

/**
 * Errors reach this node through the flow (src/runtime/flow.ts reads `scope` and `uncaught`);
 * the node itself only passes them on.
 */
class CatchNode extends Node {
  scope: string[] | null;
  uncaught: boolean;

  constructor(config: NodeConfig) {
    super(config);
    this.scope = Array.isArray(config.scope) ? (config.scope as string[]) : null;
    this.uncaught = config.uncaught === true;
    // Group scoping is not modelled by the engine; say so instead of silently widening it.
    if (config.scope === 'group') this.warn('scope "group" is not supported: catching errors from the whole flow');
    this.on('input', (msg, send, done) => {
      send(msg);
      done();
    });
  }
}

export default function (RED: RedApi) {
  RED.nodes.registerType('catch', CatchNode);
}
