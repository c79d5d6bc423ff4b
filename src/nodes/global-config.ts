import type { RedApi } from '../runtime/red-api/red-api-types.js';

export default function (RED: RedApi) {
  /**
   * The editor's store for global environment variables (and the modules a configuration needs).
   * Its env is read by the runtime (src/runtime/flows/env/global-env.ts); the node itself does nothing, but
   * must be a known type so a flows.json exported from Node-RED 3.1+ starts without waiting for it.
   */
  class GlobalConfigNode extends RED.nodes.Node {}

  RED.nodes.registerType('global-config', GlobalConfigNode);
}
