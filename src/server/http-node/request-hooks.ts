import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { sendBasicAuthChallenge, type BasicAuthCheck } from '../http-security/basic-auth.js';
import type { EntryContext } from './types.js';

/*
 * The entry's onRequest steps, in the order a request meets them (plugin.ts registers them).
 * Steps every http-in request passes take a callback: a promise each is a measurable share of a flow.
 */

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** Whether RED.httpAdmin has a route or middleware that may take the request (it is tried first). */
function adminMayHandle({ adminRoutes }: EntryContext, url: string, path: string, method: string): boolean {
  return adminRoutes !== undefined && adminRoutes.covers(url) && adminRoutes.mayHandle(path.slice(adminRoutes.mountPath.length) || '/', method);
}

/** httpAdminMiddleware, ahead of the RED.httpAdmin route that may take the request. */
export function adminMiddlewareStep(ctx: EntryContext, middleware: (request: FastifyRequest, reply: FastifyReply) => Promise<void>) {
  // Node-RED runs it for every request its admin app sees; here only for those an admin route may take.
  return async function runAdminMiddleware(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const url = request.raw.url ?? '/';
    if (adminMayHandle(ctx, url, pathOf(url), request.method)) await middleware(request, reply);
  };
}

/** A client without the password is refused before its body is read. */
function challenge(request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  if (request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined) reply.raw.setHeader('Connection', 'close');
  sendBasicAuthChallenge(reply.raw);
}

/** Node-RED's httpNodeAuth, OPTIONS (preflights) excepted. */
export function nodeAuthStep(ctx: EntryContext, nodeAuth: BasicAuthCheck): onRequestHookHandler {
  // A callback hook: a client whose credentials were checked before is let through without a promise.
  return function checkNodeAuth(request, reply, done) {
    const url = request.raw.url ?? '/';
    if (request.method === 'OPTIONS' || !ctx.app.covers(url)) return done();
    const ok = nodeAuth(request.raw);
    if (ok === true) return done();
    // RED.httpAdmin routes do not take httpNodeAuth; one that falls through is checked then.
    if (adminMayHandle(ctx, url, pathOf(url), request.method)) return done();
    if (ok === false) {
      challenge(request, reply);
      return done();
    }
    ok.then((passed) => {
      if (!passed) challenge(request, reply);
      done();
    }, done);
  };
}

/** A body for a path no route or middleware can take is refused before it is read. */
export function unroutableBodyStep(ctx: EntryContext): onRequestHookHandler {
  const { app, routeWait } = ctx;
  return function refuseUnroutableBody(request, reply, done) {
    const headers = request.headers;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return done();
    if (headers['content-length'] === '0') return done();
    // The route may be on its way back: the body is read and the request waits for it.
    if (routeWait?.active) return done();
    const url = request.raw.url ?? '/';
    if (!app.covers(url)) return done();
    const full = pathOf(url);
    if (app.mayHandle(full.slice(app.mountPath.length) || '/', request.method)) return done();
    if (adminMayHandle(ctx, url, full, request.method)) return done();
    reply.hijack();
    reply.raw.setHeader('Connection', 'close');
    app.respondUnhandled(undefined, request.raw, reply.raw);
    done();
  };
}
