import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * The connection cap without the lockout. Node's `maxConnections` refuses new connections at the
 * cap, so 220 sockets that sent nothing (each living `headersTimeout`) refused `/health` and the
 * admin. Here a new connection at the cap instead closes the connection idle the longest — no
 * request in flight: it never sent its headers, or it is a keep-alive socket between requests —
 * and is refused only when every connection is busy. A flood of silent sockets thus pushes out
 * its own sockets, never a request being answered. Websockets a listener took (`hold`) are never
 * pushed out: `/comms` bounds its unauthenticated ones itself, and the flows' websocket listeners
 * theirs (webSocketNodeLimits), each within a quarter of the cap. An upgrade request no listener
 * has taken yet stays idle, so a flood of them pushes itself out too.
 *
 * Closing is asynchronous, so Node's own cap stays a little above this one to bound file
 * descriptors while pushed-out sockets finish closing.
 */
export function reserveConnections(server: Server, cap: number): { hold(socket: Duplex): void } {
  server.maxConnections = cap + Math.max(4, Math.ceil(cap / 20));
  const inFlight = new Map<Socket, number>();
  /** Sockets with no request in flight, longest idle first. */
  const idle = new Set<Socket>();

  server.on('connection', (socket: Socket) => {
    if (inFlight.size >= cap) {
      const oldest = idle.values().next().value;
      if (oldest === undefined) return void socket.destroy();
      forget(oldest);
      oldest.destroy();
    }
    inFlight.set(socket, 0);
    idle.add(socket);
    socket.once('close', () => forget(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = connectionOf(req.socket);
    const count = inFlight.get(socket);
    if (count === undefined) return;
    inFlight.set(socket, count + 1);
    idle.delete(socket);
    // 'close' follows 'finish' and also ends a response whose client went away; it covers the
    // request's body too, whose reading the body timeouts bound.
    res.once('close', () => {
      const held = inFlight.get(socket);
      if (held === undefined) return;
      inFlight.set(socket, held - 1);
      if (held === 1 && !socket.destroyed) idle.add(socket);
    });
  });

  function forget(socket: Socket): void {
    inFlight.delete(socket);
    idle.delete(socket);
  }
  return {
    /** A websocket a listener took: counted for good (until it closes), never idle. */
    hold(upgraded: Duplex): void {
      const socket = connectionOf(upgraded);
      if (!inFlight.has(socket)) return;
      inFlight.set(socket, Number.POSITIVE_INFINITY);
      idle.delete(socket);
    },
  };
}

/** Under TLS, requests arrive on the TLS socket and 'connection' saw the TCP socket beneath it. */
function connectionOf(socket: Duplex): Socket {
  return (socket as Duplex & { _parent?: Socket })._parent ?? (socket as Socket);
}
