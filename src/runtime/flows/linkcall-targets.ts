import type { LinkcallTargets as LinkcallTargetsApi, NodeInstance } from '../red-api/red-api-types.js';

/** Inside a subflow instance a flow's path is the tab's id, then the instances' ids. */
const inSubflow = (node: NodeInstance) => node._flow.path.includes('/');

/**
 * The running `link in` nodes by id and by name, one registry per runtime (Node-RED 5's
 * `RED.nodes.linkcallTargets`), so a function node can call a `link in` of another node set
 * as a link call node does.
 */
export class LinkcallTargets implements LinkcallTargetsApi {
  private readonly byId = new Map<string, NodeInstance>();
  private readonly byName = new Map<string, Set<NodeInstance>>();

  register(node: NodeInstance): void {
    if (node?.type !== 'link in') throw new Error("linkcallTargets: node must be a 'link in' node");
    this.byId.set(node.id, node);
    const name = node.name || node.id;
    const named = this.byName.get(name) ?? new Set<NodeInstance>();
    named.add(node);
    this.byName.set(name, named);
  }

  remove(node: NodeInstance): void {
    if (this.byId.get(node.id) === node) this.byId.delete(node.id);
    const name = node.name || node.id;
    const named = this.byName.get(name);
    if (!named?.delete(node) || named.size > 0) return;
    this.byName.delete(name);
  }

  getTargetNode(caller: NodeInstance, target: unknown, isDynamic: boolean): NodeInstance {
    const key = typeof target === 'string' ? target : '';
    const byId = key ? this.byId.get(key) : undefined;
    if (byId) return byId;
    if (key && isDynamic) {
      const named = [...(this.byName.get(key) ?? [])];
      const here = named.filter((n) => n._flow.path === caller._flow.path);
      if (here.length === 1) return here[0];
      const outside = named.filter((n) => !inSubflow(n));
      if (outside.length > 1) throw new Error(`Multiple link-in nodes named '${key}' found`);
      if (outside.length === 1) return outside[0];
    }
    throw new Error(`target link-in node '${String(target || '')}' not found`);
  }
}
