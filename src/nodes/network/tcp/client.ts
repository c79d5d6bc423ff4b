import type net from 'node:net';
import type { NodeInstance } from '../../../runtime/red-api/red-api-types.js';
import type { TlsConfigNode } from '../tls/tls.js';
import { connectTo } from './shared.js';

/** What one connection of a reconnecting client does as it connects and closes. */
export interface ClientConnection {
  connected(): void;
  closed(): void;
  /** After a close while the node still runs: milliseconds until the next attempt. */
  reconnectAfter(): number;
}

export interface KeptClient {
  /** The socket while it is connected. */
  socket(): net.Socket | undefined;
}

/**
 * A tcp client node's connection (tcp in and tcp out in client mode): connects, reconnects after
 * each close for as long as the node runs, and on the node's close ends the socket and waits for it.
 */
export function keepConnected(node: NodeInstance, host: string, port: number, tlsNode: TlsConfigNode | null, open: (socket: net.Socket) => ClientConnection): KeptClient {
  let client: net.Socket | undefined;
  let connected = false;
  let closing = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onClosed: (() => void) | undefined;
  const connect = () => {
    node.log(`connecting to ${host}:${port}`);
    node.status({ fill: 'grey', shape: 'dot', text: 'common.status.connecting' });
    let connection: ClientConnection | undefined;
    const socket = connectTo(port, host, tlsNode, () => {
      connected = true;
      node.log(`connected to ${host}:${port}`);
      connection?.connected();
    });
    client = socket;
    socket.setKeepAlive(true, 120000);
    connection = open(socket);
    socket.on('close', () => {
      connected = false;
      connection!.closed();
      if (closing) return onClosed?.();
      timer = setTimeout(connect, connection!.reconnectAfter());
    });
  };
  connect();
  node.on('close', (done: () => void) => {
    closing = true;
    clearTimeout(timer);
    if (!connected || !client) return done();
    onClosed = done;
    client.destroy();
  });
  return { socket: () => (connected ? client : undefined) };
}
