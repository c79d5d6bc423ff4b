import type { NodeClasses, NodeConstructor } from '../../registry/registry.js';
import { Node } from './node.js';

/** The constructor a subflow module type is listed with; its instances are started from the definition. */
class SubflowModuleNode extends Node {}

/**
 * Function constructors are re-parented onto Node.prototype (Node-RED's util.inherits); ES classes
 * that do not extend Node have the top of their prototype chain re-parented instead.
 */
function inheritNode(ctor: NodeConstructor): void {
  const proto = ctor.prototype as object | undefined;
  if (!proto || proto === Node.prototype || proto instanceof Node) return;
  let top: object = proto;
  for (;;) {
    const parent = Object.getPrototypeOf(top) as object | null;
    if (parent === null || parent === Object.prototype) break;
    if (parent === Node.prototype) return;
    top = parent;
  }
  Object.setPrototypeOf(top, Node.prototype);
}

/** How registered types become runtime nodes, handed to the registry. */
export const nodeClasses: NodeClasses = { adopt: inheritNode, subflowModule: SubflowModuleNode };
