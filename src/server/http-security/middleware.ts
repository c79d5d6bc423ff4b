import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Middleware } from '../../settings/http.js';
import { decorate } from '../http-node/compat.js';

/**
 * Runs Express-style middleware (httpAdminMiddleware) from a Fastify onRequest hook: the request
 * goes on when the last one calls next(); one that answers the request itself ends it there.
 */
export function expressMiddlewareHook(middleware: Middleware | Middleware[]) {
  const list = Array.isArray(middleware) ? middleware : [middleware];
  return (request: FastifyRequest, reply: FastifyReply) =>
    new Promise<void>((resolve, reject) => {
      const { req, res } = decorate(request.raw, reply.raw, undefined);
      let i = 0;
      let settled = false;
      const answered = () => {
        if (settled) return;
        settled = true;
        reply.hijack();
        resolve();
      };
      res.once('finish', answered);
      res.once('close', answered);
      const settle = (err?: unknown) => {
        settled = true;
        res.off('finish', answered);
        res.off('close', answered);
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve();
      };
      const next = (err?: unknown): void => {
        if (settled) return;
        if (err && err !== 'route' && err !== 'router') return settle(err);
        if (i === list.length) return settle();
        const fn = list[i++];
        try {
          const result = fn(req, res, next);
          if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
            (result as PromiseLike<unknown>).then(undefined, (e: unknown) => next(e || new Error('middleware rejected')));
          }
        } catch (e) {
          next(e || new Error('middleware threw'));
        }
      };
      next();
    });
}
