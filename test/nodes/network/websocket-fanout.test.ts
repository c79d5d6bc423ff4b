import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterFanout } from '../../../src/nodes/network/websocket/fanout.js';
import type { ClusterChannel, NodeInstance } from '../../../src/runtime/red-api/red-api-types.js';

/** Two instances' listeners joined by an in-memory RED.cluster that refuses what is over its size. */
function pair() {
  const subscribers = new Map<string, (data: unknown, origin: string) => void>();
  const channel = (self: string): ClusterChannel => ({
    publish: (nodeId, data) => {
      if (JSON.stringify(data).length > 7000) return false;
      for (const [who, listener] of subscribers) if (who !== self) listener(JSON.parse(JSON.stringify(data)), self);
      return true;
    },
    subscribe: (_nodeId, listener) => {
      subscribers.set(self, listener);
      return () => subscribers.delete(self);
    },
  });
  const warnings: string[] = [];
  const node = { id: 'live', warn: (m: string) => warnings.push(m) } as unknown as NodeInstance;
  const received: unknown[] = [];
  const b = {
    broadcast: (d: string | Buffer) => void received.push(['all', d]),
    reply: (id: string, d: string | Buffer) => {
      received.push([id, d]);
      return true;
    },
  };
  const fanA = clusterFanout(channel('a'), node, { broadcast: () => undefined, reply: () => false });
  const fanB = clusterFanout(channel('b'), node, b);
  return { fanA, fanB, received, warnings };
}

describe('websocket listener across a cluster', () => {
  it('carries broadcasts and replies, text and binary, to the listener on the other instance', () => {
    const { fanA, received } = pair();
    fanA.broadcast('text');
    fanA.broadcast(Buffer.from([0, 255]));
    fanA.reply('s1', 'for s1');
    assert.deepEqual(received, [['all', 'text'], ['all', Buffer.from([0, 255])], ['s1', 'for s1']]);
  });

  it('warns once when a message is too large to reach the other instances', () => {
    const { fanA, received, warnings } = pair();
    fanA.broadcast('x'.repeat(8000));
    fanA.broadcast('y'.repeat(8000));
    assert.deepEqual(received, []);
    assert.equal(warnings.length, 1);
  });

  it('hears nothing once closed', () => {
    const { fanA, fanB, received } = pair();
    fanB.close();
    fanA.broadcast('late');
    assert.deepEqual(received, []);
  });
});
