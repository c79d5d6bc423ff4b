import Fastify, { LogController } from 'fastify';
import formbody from '@fastify/formbody';
import { randomUUID } from 'node:crypto';
import type { Services } from './services.js';
import { adminErrorHandler } from './errors.js';
import { authRoutes } from './auth-routes.js';
import { settingsRoutes } from './settings-routes.js';
import { flowsRoutes } from './flows-routes.js';
import { nodesRoutes } from './nodes-routes.js';
import { pluginsRoutes } from './plugins-routes.js';
import { credentialsRoutes } from './credentials-routes.js';
import { httpNodePlugin, httpServerFactory, dispatchOrNotFound } from './http-node/app.js';
import { applyCors, corsPreflight } from './cors.js';
import FindMyWay from 'find-my-way';

/**
 * Builds the HTTP server: the admin API under httpAdminRoot and the flows' own http-in routes
 * under httpNodeRoot, on one port. Each route group is an encapsulated plugin; the admin API
 * shares one error handler so every failure is `{code, message}` JSON.
 */
export async function buildApp(services: Services) {
  const { settings } = services;
  const app = Fastify({
    // Request/response objects with the Express API built in, so http-in flows pay nothing per request for it.
    serverFactory: httpServerFactory,
    loggerInstance: services.log,
    // Per-request logging would cost more than a whole flow hop; errors are logged with the request id.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    // No child logger per request (Fastify's default costs ~6% of an http-in flow); the few lines a
    // request logs carry its id explicitly.
    childLoggerFactory: (logger) => logger,
    bodyLimit: settings.apiMaxLength,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });

  app.addHook('onRequest', corsPreflight(settings));
  // The admin API's paths, whatever the method: a wrong method there is the API's 404 (JSON), not
  // an unserved http-in path (Express's page) even when both share a root.
  const apiPaths = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 500 });
  const seen = new Set<string>();
  services.httpNode.setApiPaths((path) => apiPaths.find('GET', path) !== null);
  await app.register(
    async (admin) => {
      admin.addHook('onRoute', ({ url }) => {
        if (!seen.has(url)) apiPaths.on('GET', url, () => {});
        seen.add(url);
      });
      admin.setErrorHandler(adminErrorHandler);
      // Routes contributed modules add through RED.httpAdmin, then a JSON 404.
      admin.setNotFoundHandler((request, reply) => dispatchOrNotFound(services.httpAdmin, request, reply));
      await admin.register(formbody, { bodyLimit: settings.apiMaxLength });
      admin.addHook('onRequest', async (request, reply) => {
        reply.header('X-Content-Type-Options', 'nosniff');
        reply.header('Cache-Control', 'no-store');
        reply.header('X-Request-Id', request.id);
        applyCors(settings, request.headers.origin, reply);
      });
      await admin.register(authRoutes, { services });
      await admin.register(settingsRoutes, { services });
      await admin.register(flowsRoutes, { services });
      await admin.register(nodesRoutes, { services });
      await admin.register(pluginsRoutes, { services });
      await admin.register(credentialsRoutes, { services });
    },
    { prefix: settings.httpAdminRoot === '/' ? '' : settings.httpAdminRoot },
  );

  await app.register(httpNodePlugin, {
    services,
    adminRoutes: services.httpAdmin,
    prefix: settings.httpNodeRoot === '/' ? '' : settings.httpNodeRoot,
  });
  return app;
}
