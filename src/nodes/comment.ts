import type { RedApi } from '../runtime/red-api/red-api-types.js';

export default function (RED: RedApi) {
  /** A note in the editor: it exists so flows containing it deploy, and does nothing. */
  class CommentNode extends RED.nodes.Node {}

  RED.nodes.registerType('comment', CommentNode);
}
