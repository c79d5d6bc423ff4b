import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { adminErrorHandler } from '../errors.js';
import type { EntryContext } from './types.js';
import { adminMiddlewareStep, nodeAuthStep, unroutableBodyStep } from './request-hooks.js';
import { handleStep } from './handle-request.js';

export interface HttpNodePluginOptions extends Omit<EntryContext, 'app'> {
  services: Services;
  /** The editor's page answers GET / on this root (both roots are the same): leave it that path. */
  editorAtRoot?: boolean;
  /**
   * httpAdminMiddleware, for the RED.httpAdmin routes served here: under a root shared with the
   * admin API, and under the admin root when the flows' root holds it (admin /admin, nodes /).
   */
  adminMiddleware?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/**
 * Serves httpNodeRoot: every method and path reaches services.httpNode with the body parsed the
 * way Node-RED's http-in does. Registered next to the admin scope; Fastify prefers the admin's
 * static and parametric routes over these wildcards, so admin routes win on a shared root.
 * The steps are registered in the order a request takes them.
 */
export const httpNodePlugin: FastifyPluginAsync<HttpNodePluginOptions> = async (scope, options) => {
  const { services, editorAtRoot, adminMiddleware, adminRoutes, originCheck, adminPaths, nodeAuth, routeWait } = options;
  const ctx: EntryContext = { app: services.httpNode, adminRoutes, originCheck, adminPaths, nodeAuth, routeWait };
  scope.setErrorHandler(adminErrorHandler);
  if (adminMiddleware) scope.addHook('onRequest', adminMiddlewareStep(ctx, adminMiddleware));
  if (nodeAuth) scope.addHook('onRequest', nodeAuthStep(ctx, nodeAuth));
  scope.addHook('onRequest', unroutableBodyStep(ctx));
  // Bodies arrive whole and raw: each route reads its own way (handle-request.ts).
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: services.settings.apiMaxLength }, (_req, body, done) => {
    done(null, body);
  });
  const handler = handleStep(ctx);
  if (editorAtRoot) scope.route({ method: scope.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD'), url: '/', handler });
  else scope.all('/', handler);
  scope.all('/*', handler);
};
