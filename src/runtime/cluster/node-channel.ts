import type { ClusterRelay } from '../../storage/contract.js';
import type { ClusterChannel } from '../red-api/red-api-types.js';

/** RED.cluster over the cluster relay: one relay kind, messages routed by the node id they carry. */
export function nodeChannel(relay: ClusterRelay): ClusterChannel {
  const listeners = new Map<string, Set<(data: unknown, origin: string) => void>>();
  relay.onMessage(({ origin, kind, data }) => {
    if (kind !== 'node' || typeof data !== 'object' || data === null) return;
    const { n, d } = data as { n?: unknown; d?: unknown };
    if (typeof n !== 'string') return;
    for (const listener of listeners.get(n) ?? []) listener(d, origin);
  });
  return {
    publish(nodeId, data) {
      const message = { n: nodeId, d: data };
      if (Buffer.byteLength(JSON.stringify(message) ?? '') > relay.maxMessageBytes) return false;
      relay.publish('node', message);
      return true;
    },
    subscribe(nodeId, listener) {
      let set = listeners.get(nodeId);
      if (!set) listeners.set(nodeId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(nodeId);
      };
    },
  };
}
