import { Node } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api-types.js';

/** A note in the editor: it exists so flows containing it deploy, and does nothing. */
class CommentNode extends Node {}

export default function (RED: RedApi) {
  RED.nodes.registerType('comment', CommentNode);
}
