import { createServer as createHttpsServer } from 'node:https';
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { expressServerOptions } from './compat.js';
import type { HttpNodeApp } from './types.js';

/**
 * Fastify's `serverFactory`: a node:http server whose requests and responses are born with the
 * Express API. Swapping prototypes per request instead invalidates V8's inline caches for the
 * whole request/stream prototype chain and costs most of the throughput (measured ~4x).
 */
export function httpServerFactory(handler: RequestListener, options: { checkEveryMs?: number; tls?: Record<string, unknown> } = {}): Server {
  // The subclasses are still IncomingMessage/ServerResponse, which is all Fastify's types need.
  // Header and request timeouts are only enforced when connections are checked (Node: every 30 s).
  const checks = options.checkEveryMs === undefined ? {} : { connectionsCheckingInterval: options.checkEveryMs };
  if (options.tls) return createHttpsServer({ ...options.tls, ...expressServerOptions, ...checks } as ServerOptions, handler) as unknown as Server;
  return createServer({ ...expressServerOptions, ...checks } as ServerOptions, handler);
}

/**
 * For a Fastify not-found handler: hands the request to `app`, answering a JSON 404 when no
 * route of `app` takes it. Headers already set on the reply (by onRequest hooks) are kept.
 */
export function dispatchOrNotFound(app: HttpNodeApp, request: FastifyRequest, reply: FastifyReply): void {
  const res = reply.raw;
  const headers = reply.getHeaders();
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  reply.hijack();
  app.serve(request.raw, res, request.body ?? {});
}
