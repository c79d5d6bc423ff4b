import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteHandlerMethod } from 'fastify';
import { RunnelError } from '../../base/errors.js';
import { sendBasicAuthChallenge } from '../http-security/basic-auth.js';
import type { ExpressRequest } from './compat.js';
import { parseBody, uploadRouteBody, isMultipart } from './body.js';
import { parseMultipart } from './multipart.js';
import type { EntryContext } from './types.js';

/*
 * The entry's handler, after the onRequest steps (request-hooks.ts): the body is read the way the
 * request's route wants it, RED.httpAdmin is tried, then the flows' http-in routes.
 */

/** Takes the request from Fastify: from here on it is answered on the raw response. */
export function handleStep(ctx: EntryContext): RouteHandlerMethod {
  return function handleRequest(request, reply) {
    reply.hijack();
    readBody(ctx, request.raw, reply.raw, request.body as Buffer | undefined);
  };
}

/** Reads the body the way the request's route wants it, then routes the request. */
function readBody(ctx: EntryContext, req: IncomingMessage, res: ServerResponse, raw: Buffer | undefined): void {
  const { app } = ctx;
  const contentType = req.headers['content-type'];
  const mode = app.bodyModeOf(req.method ?? 'GET', req.url ?? '/');
  if (mode === 'upload' && isMultipart(contentType)) {
    parseMultipart(req.headers, raw ?? Buffer.alloc(0)).then(({ fields, files }) => {
      (req as ExpressRequest).files = files;
      route(ctx, req, res, fields, raw);
    }, (e: unknown) => app.respondUnhandled(e, req, res));
    return;
  }
  let body: unknown;
  try {
    if (mode === 'raw') body = raw ?? Buffer.alloc(0);
    else if (mode === 'upload') body = uploadRouteBody(contentType, raw);
    else body = parseBody(contentType, raw);
  } catch (e) {
    app.respondUnhandled(e, req, res);
    return;
  }
  route(ctx, req, res, body, raw);
}

/** RED.httpAdmin first, as Node-RED mounts its admin app before the node app; then the flows' routes. */
function route(ctx: EntryContext, req: IncomingMessage, res: ServerResponse, body: unknown, raw: Buffer | undefined): void {
  const { adminRoutes, originCheck } = ctx;
  const url = req.url ?? '/';
  if (!adminRoutes || adminRoutes._router.stack.length === 0 || !adminRoutes.covers(url)) return toFlowRoutes(ctx, req, res, body, raw);
  // Kept from RED.httpAdmin by its origin, the request still owes the httpNodeAuth left to it.
  if (originCheck?.(req.method ?? 'GET', req.headers)) return withNodeAuth(ctx, req, res, body, raw);
  adminRoutes.dispatch(req, res, body, (err, q, s) => afterAdminRoutes(ctx, err, q, s, raw));
}

/** RED.httpAdmin answered nothing: the request continues to the node routes, as in Express. */
function afterAdminRoutes(ctx: EntryContext, err: unknown, req: IncomingMessage, res: ServerResponse, raw: Buffer | undefined): void {
  if (err !== undefined) return (ctx.adminRoutes ?? ctx.app).respondUnhandled(err, req, res);
  const expressReq = req as ExpressRequest;
  req.url = expressReq.originalUrl;
  withNodeAuth(ctx, req, res, expressReq.body, raw);
}

/** httpNodeAuth, which the onRequest step left to here for a request RED.httpAdmin might have taken. */
function withNodeAuth(ctx: EntryContext, req: IncomingMessage, res: ServerResponse, body: unknown, raw: Buffer | undefined): void {
  const { app, nodeAuth } = ctx;
  if (!nodeAuth || req.method === 'OPTIONS') return toFlowRoutes(ctx, req, res, body, raw);
  Promise.resolve(nodeAuth(req)).then((ok) => {
    if (ok) toFlowRoutes(ctx, req, res, body, raw);
    else sendBasicAuthChallenge(res);
  }, (e: unknown) => app.respondUnhandled(e, req, res));
}

/** The flows' http-in routes, never for an admin path: the request may carry the admin's token. */
function toFlowRoutes(ctx: EntryContext, req: IncomingMessage, res: ServerResponse, body: unknown, raw: Buffer | undefined): void {
  const { app, adminPaths } = ctx;
  const url = req.url ?? '/';
  const methods = adminPaths?.methodsOf(url);
  if (methods) {
    const path = url.split('?')[0].slice(0, 200);
    const method = req.method ?? 'GET';
    if (methods.length > 0 && !methods.includes(method)) {
      res.setHeader('Allow', methods.join(', '));
      return app.respondUnhandled(new RunnelError('method_not_allowed', `${path} names an admin API path, which takes ${methods.join(', ')}; http-in routes never answer those`), req, res);
    }
    return app.respondUnhandled(new RunnelError('not_found', `${method} ${path} names an admin API path; http-in routes never answer those`), req, res);
  }
  app.dispatch(req, res, body, (err, q, s) => unmatched(ctx, err, q, s, raw));
}

/**
 * No route took it: while the flows start or are redeployed it waits for them and is served
 * again from its raw body, since the new route may read bodies another way.
 */
function unmatched(ctx: EntryContext, err: unknown, req: IncomingMessage, res: ServerResponse, raw: Buffer | undefined): void {
  const again = () => {
    req.url = (req as ExpressRequest).originalUrl;
    readBody(ctx, req, res, raw);
  };
  if (err === undefined && ctx.routeWait?.hold(req, res, again)) return;
  ctx.app.respondUnhandled(err, req, res);
}
