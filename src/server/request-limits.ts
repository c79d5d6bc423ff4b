import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../settings/settings.js';
import { RunnelError } from '../base/errors.js';
import { bearerPrincipal } from '../auth/guard.js';
import type { AuthService } from '../auth/types.js';
import type { ReceiveBudget } from '../base/receive-budget.js';
import { reserveConnections } from './connection-reserve.js';
import { isClaimed, onUpgrade, othersListen, refuseUpgrade } from '../base/upgrades.js';

/**
 * Bounds on what clients can make the server hold. Bodies are buffered before routes see them,
 * so stalled uploads each pinned up to apiMaxLength (1,500 took 7 GB): the bytes announced by the
 * requests in flight are counted against one budget, and a request that would pass it is refused
 * with 503 before its body is read. A chunked body without a length is counted at apiMaxLength.
 */
export function bodyBudget(settings: Settings, budget: ReceiveBudget, admitsReserve: (request: FastifyRequest, size: number) => Promise<boolean>) {
  // A callback hook, not an async one: every request passes here, and a promise per request is
  // a measurable share of an http-in flow. Only a request the open budget refuses is asked about.
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const headers = request.headers;
    const length = headers['content-length'];
    const size = length !== undefined ? Math.min(Number(length) || 0, settings.apiMaxLength) : headers['transfer-encoding'] !== undefined ? settings.apiMaxLength : 0;
    if (size === 0) return done();
    const admit = () => {
      reply.raw.once('close', () => budget.release(size));
      done();
    };
    const refuse = () => {
      void reply.header('Retry-After', '5').header('Connection', 'close');
      done(new RunnelError('server_busy', 'The server is receiving as many request bodies as it may hold; retry shortly'));
    };
    if (budget.take(size)) return admit();
    admitsReserve(request, size).then(
      (yes) => (yes && budget.take(size, true) ? admit() : refuse()),
      () => refuse(),
    );
  };
}

/** A login's form is a few hundred bytes: one this small may use the reserve, so the admin can log in while uploads fill the rest. */
const MAX_LOGIN_BODY = 16 * 1024;

/**
 * Which bodies the open budget refused may use its reserve: requests for the admin API with a
 * valid token (or any, when adminAuth is off: everyone is the admin then) and small logins.
 */
export function adminBodies(auth: AuthService, isApiPath: (path: string) => boolean, loginPath: string) {
  return async (request: FastifyRequest, size: number): Promise<boolean> => {
    const path = request.url.split('?')[0];
    if (!isApiPath(path)) return false;
    if (!auth.enabled) return true;
    if (path === loginPath) return size <= MAX_LOGIN_BODY;
    return (await bearerPrincipal(auth, request.headers.authorization)) !== null;
  };
}

/** Slow-header and slow-body clients, idle keep-alive sockets and connection floods end in bounded time. */
export function applyServerLimits(server: Server, settings: Settings): void {
  const limits = settings.httpServerLimits;
  server.headersTimeout = limits.headersTimeout;
  server.requestTimeout = limits.requestTimeout;
  server.keepAliveTimeout = limits.keepAliveTimeout;
  const reserve = reserveConnections(server, limits.maxConnections);
  answerUnclaimedUpgrades(server, reserve.hold);
}

/** How often the server checks for timed-out requests: a quarter of the shortest timeout, at most 30 s (Node's default). */
export function checkInterval(settings: Settings): number {
  const { headersTimeout, requestTimeout } = settings.httpServerLimits;
  return Math.max(100, Math.min(30_000, Math.floor(Math.min(headersTimeout, requestTimeout) / 4)));
}

/** How long an upgrade request may wait for a node module's listener to take it. */
const UNCLAIMED_UPGRADE_MS = 2_000;

/**
 * An upgrade request (`Connection: upgrade`) for a path no websocket listens on was left open by
 * every listener, holding its socket forever: no header or request timeout covers a socket handed
 * to 'upgrade' listeners. Runnel's own listeners (`/comms`, the flows' websocket listeners) decide
 * at once, so once they all ran a socket none took gets a 404 and is closed. A node module's
 * listener may answer later: then one nothing has written to after a short while is closed
 * (socket.io's engine.io applies the same test to the paths it does not serve). A socket taken is
 * held in the connection cap (`hold`).
 */
function answerUnclaimedUpgrades(server: Server, hold: (socket: Duplex) => void): void {
  const notFound = (socket: Duplex) => refuseUpgrade(socket, 404, 'not_found', 'No websocket listens on this path');
  const taken = (socket: Duplex & { bytesWritten?: number }) => isClaimed(socket) || (socket.bytesWritten ?? 0) > 0;
  onUpgrade(server, (_req: IncomingMessage, socket: Duplex) => {
    // Every listener has run by then (the event is synchronous).
    setImmediate(() => {
      if (socket.destroyed) return;
      if (taken(socket)) return hold(socket);
      if (!othersListen(server)) return notFound(socket);
      const timer = setTimeout(() => {
        if (socket.destroyed) return;
        if (taken(socket)) hold(socket);
        else notFound(socket);
      }, UNCLAIMED_UPGRADE_MS);
      timer.unref();
      socket.once('close', () => clearTimeout(timer));
    });
  });
}
