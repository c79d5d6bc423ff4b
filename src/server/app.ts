import Fastify, { LogController } from 'fastify';
import formbody from '@fastify/formbody';
import { randomUUID } from 'node:crypto';
import type { Services } from './services.js';
import { adminErrorHandler } from './errors.js';
import { authRoutes } from './auth-routes.js';
import { settingsRoutes } from './settings-routes.js';
import { flowsRoutes } from './flows-routes.js';
import { nodesRoutes } from './nodes-routes.js';
import { credentialsRoutes } from './credentials-routes.js';
import { httpNodePlugin, httpServerFactory, dispatchOrNotFound } from './http-node.js';

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
    bodyLimit: settings.apiMaxLength,
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });

  await app.register(
    async (admin) => {
      admin.setErrorHandler(adminErrorHandler);
      // Routes contributed modules add through RED.httpAdmin, then a JSON 404.
      admin.setNotFoundHandler((request, reply) => dispatchOrNotFound(services.httpAdmin, request, reply));
      await admin.register(formbody, { bodyLimit: settings.apiMaxLength });
      admin.addHook('onRequest', async (request, reply) => {
        reply.header('X-Content-Type-Options', 'nosniff');
        reply.header('Cache-Control', 'no-store');
        reply.header('X-Request-Id', request.id);
        applyCors(services, request.headers.origin, reply);
        if (request.method === 'OPTIONS' && services.settings.httpAdminCors) {
          return reply.code(204).send();
        }
      });
      await admin.register(authRoutes, { services });
      await admin.register(settingsRoutes, { services });
      await admin.register(flowsRoutes, { services });
      await admin.register(nodesRoutes, { services });
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

function applyCors(services: Services, origin: string | undefined, reply: { header(k: string, v: string): unknown }) {
  const cors = services.settings.httpAdminCors;
  if (!cors || !origin) return;
  const allowed = Array.isArray(cors.origin) ? cors.origin : [cors.origin];
  if (!allowed.includes('*') && !allowed.includes(origin)) return;
  reply.header('Access-Control-Allow-Origin', allowed.includes('*') && !cors.credentials ? '*' : origin);
  reply.header('Vary', 'Origin');
  reply.header('Access-Control-Allow-Methods', 'GET,PUT,POST,DELETE,OPTIONS');
  reply.header(
    'Access-Control-Allow-Headers',
    'Authorization,Content-Type,Runtime-API-Version,Runtime-Deployment-Type,Node-RED-API-Version,Node-RED-Deployment-Type',
  );
  if (cors.credentials) reply.header('Access-Control-Allow-Credentials', 'true');
}
