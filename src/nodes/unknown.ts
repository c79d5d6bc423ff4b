/**
 * `unknown`: the type Node-RED's editor gives a node whose module is missing when it is exported
 * that way; the runtime node does nothing, as in Node-RED, so such flows deploy and run.
 */
import type { NodeConfig, NodeInstance, RedApi } from '../runtime/red-api/red-api-types.js';

export default function (RED: RedApi) {
  function UnknownNode(this: NodeInstance, config: NodeConfig) {
    RED.nodes.createNode(this, config);
  }
  RED.nodes.registerType('unknown', UnknownNode as never);
}
