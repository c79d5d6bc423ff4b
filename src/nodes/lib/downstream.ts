import type { NodeInstance, RedApi } from '../../runtime/red-api/red-api-types.js';

/** Link nodes say where their messages go besides their wires. */
interface LinkTargets {
  /** Link out: the link in nodes it sends to. */
  linkTargets?: readonly string[];
  /** Link call: true when the target comes with each message and may be any link in. */
  targetsAnyLinkIn?: boolean;
}

/**
 * The running nodes a message leaving `start` may pass through: along wires, from link out and
 * link call nodes to their link in nodes, and to the subflow instances on the way (an instance
 * restarts as a whole, so its own node object stands for its inside). Used only when a deploy
 * is about to stop nodes, never per message.
 */
export function downstreamNodes(RED: RedApi, start: NodeInstance): NodeInstance[] {
  const seen = new Map<string, NodeInstance>();
  const queue: string[] = [];
  let everyLinkIn = false;
  const follow = (node: NodeInstance) => {
    for (const port of node.wires) for (const id of port) queue.push(id);
    const links = node as NodeInstance & LinkTargets;
    if (links.linkTargets) queue.push(...links.linkTargets);
    if (links.targetsAnyLinkIn && !everyLinkIn) {
      everyLinkIn = true;
      RED.nodes.eachNode((conf) => {
        const { id, type } = conf as { id: string; type: string };
        if (type === 'link in') queue.push(id);
      });
    }
  };
  follow(start);
  while (queue.length > 0) {
    const id = queue.pop()!;
    if (seen.has(id)) continue;
    const node = RED.nodes.getNode(id);
    if (!node) continue;
    seen.set(id, node);
    follow(node);
  }
  return [...seen.values()];
}
