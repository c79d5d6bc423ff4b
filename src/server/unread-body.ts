import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long the rest of a refused body is read and dropped before the connection is closed anyway. */
const DRAIN_MS = 5_000;

/**
 * An error answered before the request body finished arriving (a 413 on its Content-Length) reads
 * the rest of the body and drops it instead of closing the connection under the client. Fastify
 * marks such answers `Connection: close`; Node then destroys the socket as soon as the answer is
 * written, while the client is still sending, and the client's kernel sees a reset: a client that
 * reports its failed write before the answer it already received (Node 26's fetch: EPIPE) never
 * sees the 413. Node's HTTP parser keeps the body's framing, so the connection stays usable after
 * the drain, as Express (Node-RED) leaves it; the drain is bounded so an endless upload cannot
 * hold the connection.
 */
export function drainUnreadBody(request: FastifyRequest, reply: FastifyReply): void {
  const req = request.raw;
  if (req.complete || reply.getHeader('connection') !== 'close') return;
  reply.removeHeader('connection');
  const socket = req.socket;
  reply.raw.once('finish', () => {
    if (req.complete) return;
    const timer = setTimeout(() => socket.destroy(), DRAIN_MS);
    timer.unref();
    // The socket outlives the request on a kept-alive connection: its listener goes with the drain.
    const drained = () => {
      clearTimeout(timer);
      socket.off('close', drained);
    };
    req.once('end', drained);
    socket.once('close', drained);
  });
}
