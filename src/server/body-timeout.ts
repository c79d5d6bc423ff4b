import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerOnSocket } from '../base/socket-answer.js';

/**
 * A body that stops arriving ends long before `requestTimeout`. A slow-loris POST that sent a
 * byte now and then held its connection (and a place in the connection cap) for the whole
 * requestTimeout, 120 s. Each request with a body is watched through its socket's `bytesRead`
 * (reading the body itself would take it from its route): one that received nothing for
 * `bodyTimeout` is answered 408 `request_timeout` — while no answer has started — and closed.
 *
 * One timer per server checks every request in flight, a quarter of `bodyTimeout` apart, so a
 * stall is noticed between `bodyTimeout` and 1.25 × `bodyTimeout`.
 */
export function stalledBodies(server: Server, bodyTimeout: number) {
  const watched = new Map<IncomingMessage, { res: ServerResponse; socket: Socket; read: number; since: number }>();
  let timer: ReturnType<typeof setInterval> | undefined;
  server.once('close', () => clearInterval(timer));

  function check(): void {
    const t = Date.now();
    for (const [req, w] of watched) {
      if (req.complete || w.socket.destroyed) {
        watched.delete(req);
      } else if (w.socket.bytesRead !== w.read) {
        w.read = w.socket.bytesRead;
        w.since = t;
      } else if (t - w.since >= bodyTimeout) {
        watched.delete(req);
        timeOut(w.res, w.socket);
      }
    }
    if (watched.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const { headers, raw: req } = request;
    if ((headers['content-length'] === undefined || headers['content-length'] === '0') && headers['transfer-encoding'] === undefined) return done();
    const socket = req.socket;
    watched.set(req, { res: reply.raw, socket, read: socket.bytesRead, since: Date.now() });
    reply.raw.once('close', () => watched.delete(req));
    if (!timer) {
      timer = setInterval(check, Math.max(10, Math.floor(bodyTimeout / 4)));
      timer.unref();
    }
    done();
  };
}

/** As Node answers its own requestTimeout: on the socket, since the route may still be waiting for the body. */
function timeOut(res: ServerResponse, socket: Socket): void {
  if (res.headersSent) return void socket.destroy();
  answerOnSocket(socket, 408, 'request_timeout', 'No byte of the request body arrived within httpServerLimits.bodyTimeout');
}
