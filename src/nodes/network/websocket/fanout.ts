/**
 * A listener's part in a cluster: a broadcast reaches the clients connected to every instance,
 * and a reply to a session this instance does not hold goes to the instance that does. Frames go
 * through RED.cluster (text as is, binary as base64); one too large for it reaches only this
 * instance's clients, with a warning.
 */
import type { ClusterChannel, NodeInstance } from '../../../runtime/red-api/red-api-types.js';

interface Frame {
  /** The session it is for; absent for a broadcast. */
  to?: string;
  text?: string;
  bin?: string;
}

export interface Fanout {
  broadcast(data: string | Buffer): void;
  /** A reply to a session held elsewhere. */
  reply(id: string, data: string | Buffer): void;
  close(): void;
}

export function clusterFanout(
  cluster: ClusterChannel, node: NodeInstance, local: { broadcast(data: string | Buffer): void; reply(id: string, data: string | Buffer): boolean },
): Fanout {
  let warned = false;
  const send = (frame: Frame, data: string | Buffer) => {
    const body = Buffer.isBuffer(data) ? { ...frame, bin: data.toString('base64') } : { ...frame, text: data };
    if (cluster.publish(node.id, body) || warned) return;
    warned = true;
    node.warn('A message too large for the cluster reached only the clients of this instance');
  };
  const unsubscribe = cluster.subscribe(node.id, (raw) => {
    const frame = raw as Frame;
    const data = typeof frame.text === 'string' ? frame.text : typeof frame.bin === 'string' ? Buffer.from(frame.bin, 'base64') : undefined;
    if (data === undefined) return;
    if (typeof frame.to === 'string') local.reply(frame.to, data);
    else local.broadcast(data);
  });
  return {
    broadcast: (data) => send({}, data),
    reply: (id, data) => send({ to: id }, data),
    close: unsubscribe,
  };
}
