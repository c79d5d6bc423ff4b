import type { IncomingMessage } from 'node:http';
import Fastify, { LogController } from 'fastify';
import formbody from '@fastify/formbody';
import { randomUUID } from 'node:crypto';
import type { Services } from './services.js';
import { projectsRoutes } from './projects-routes.js';
import { adminErrorHandler } from './errors.js';
import { authRoutes } from './auth-routes.js';
import { strategyRoutes } from './strategy-routes.js';
import { settingsRoutes } from './settings-routes.js';
import { flowsRoutes } from './flows-routes.js';
import { nodesRoutes } from './nodes-routes.js';
import { clusterRoutes } from './cluster-routes.js';
import { credentialsRoutes } from './credentials-routes.js';
import { historyRoutes } from './history-routes.js';
import { queuesRoutes } from './queues-routes.js';
import { flowRoutes } from './flow-routes.js';
import { healthRoutes } from './health-routes.js';
import { tokensRoutes } from './tokens-routes.js';
import { diagnosticsRoutes } from './diagnostics-routes.js';
import { metricsRoutes } from './metrics/routes.js';
import { errorBody } from './schemas.js';
import { openApiRoute, type DeclaredRoute } from './openapi.js';
import { httpNodePlugin } from './http-node/plugin.js';
import { httpServerFactory, dispatchOrNotFound } from './http-node/server.js';
import { RouteWait } from './http-node/route-wait.js';
import { applyCors, corsPreflight } from './cors.js';
import { createOriginCheck } from './request-origin.js';
import { AdminPaths } from './admin-paths.js';
import { receiveBudget } from '../base/receive-budget.js';
import { adminBodies, applyServerLimits, bodyBudget, checkInterval } from './request-limits.js';
import { setClientAddress } from '../base/upgrades.js';
import { stalledBodies } from './body-timeout.js';
import { refuseUnsafePaths } from './path-check.js';
import { editorRoutes } from './editor/editor-routes.js';
import { editorApiRoutes } from './editor/editor-api-routes.js';
import { libraryRoutes } from './editor/library-routes.js';
import { contextRoutes } from './editor/context-routes.js';
import { editorSettings } from './editor/editor-settings.js';
import { NodeResources } from './editor/node-resources.js';
import { buildTheme } from './editor/theme.js';
import { activeTheme, THEME_PLUGIN_TYPE } from './editor/theme-plugin.js';
import { CommsServer } from './comms/comms-server.js';
import proxyaddr from '@fastify/proxy-addr';
import { trustProxy } from './http-node/app-settings.js';
import { bridgeRuntimeToComms } from './comms/runtime-bridge.js';
import path from 'node:path';
import FindMyWay from 'find-my-way';
import type { TlsOptions } from '../settings/http.js';
import { requireHttpsHook } from './http-security/require-https.js';
import { expressMiddlewareHook } from './http-security/middleware.js';
import { basicAuthCheck } from './http-security/basic-auth.js';
import { parseJsonWithPositions } from './json-error.js';
import { staticFiles } from './http-security/static-files.js';
import { lazySchemaCompilers } from './lazy-schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The editor's websocket; absent with disableEditor. */
    comms?: CommsServer;
  }
}

/**
 * Builds the HTTP server: the admin API under httpAdminRoot and the flows' own http-in routes
 * under httpNodeRoot, on one port. Each route group is an encapsulated plugin; the admin API
 * shares one error handler so every failure is `{code, message}` JSON.
 */
export async function buildApp(services: Services, options: { tls?: TlsOptions } = {}) {
  const { settings } = services;
  const app = Fastify({
    // Request/response objects with the Express API built in, so http-in flows pay nothing per request for it.
    serverFactory: (handler) => httpServerFactory(handler, { checkEveryMs: checkInterval(settings), tls: options.tls }),
    loggerInstance: services.log,
    // Per-request logging would cost more than a whole flow hop; errors are logged with the request id.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    // No child logger per request (Fastify's default costs ~6% of an http-in flow); the few lines a
    // request logs carry its id explicitly.
    childLoggerFactory: (logger) => logger,
    bodyLimit: settings.apiMaxLength,
    genReqId: () => randomUUID(),
    // Fastify takes Express's forms (a hop count too, which its types omit).
    trustProxy: (typeof settings.trustProxy === 'string' ? settings.trustProxy.split(',').map((s) => s.trim()) : settings.trustProxy) as boolean | string[],
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    schemaController: { compilersFactory: lazySchemaCompilers() },
    // Checking the routes' own schemas against ajv's meta-schema compiled that meta-schema in every
    // process, ~35 ms of the first request with a body schema (a first deploy); the schemas are
    // static and test/server/openapi.test.ts checks each of them against the meta-schema instead.
    ajv: { customOptions: { validateSchema: false } },
  });
  // Fastify logs "Server listening at <address>" once for each address; Runnel's start summary says where it listens.
  app.log = withoutListeningLines(app.log);

  const originCheck = createOriginCheck(settings);
  const { metrics } = services;
  if (metrics) {
    app.addHook('onRequest', metrics.onRequest);
    app.addHook('onResponse', metrics.onResponse);
  }
  const { nodes } = services.admin;
  const userTheme = buildTheme(settings.editorTheme, settings.settingsFile ? path.dirname(settings.settingsFile) : process.cwd());
  const theme = activeTheme(userTheme, settings.editorTheme.theme, {
    getPlugin: (id) => nodes.getPlugin(id),
    themeIds: () => nodes.getPluginsByType(THEME_PLUGIN_TYPE).map((p) => p.id),
  });
  const resources = new NodeResources(services.admin.nodes);

  const trust = trustProxy(settings.trustProxy);
  const clientAddress = (req: IncomingMessage) => (trust ? proxyaddr(req, trust) : (req.socket.remoteAddress ?? ''));
  // The flows' websocket listeners bound connections per client address with the same reading.
  setClientAddress(app.server, clientAddress);
  if (!settings.disableEditor) {
    const comms = new CommsServer(app.server, {
      path: `${settings.httpAdminRoot === '/' ? '' : settings.httpAdminRoot}/comms`,
      auth: services.auth,
      log: services.log,
      originCheck,
      requireHttps: settings.requireHttps,
      clientAddress,
      // A quarter of the connections at most: the rest stays for the admin and /health.
      maxPending: Math.max(1, Math.floor(settings.httpServerLimits.maxConnections / 4)),
    });
    const detach = bridgeRuntimeToComms(services.admin, comms);
    app.decorate('comms', comms);
    // Open websockets would keep the server from closing.
    app.addHook('preClose', async () => {
      detach();
      comms.close();
    });
  }

  applyServerLimits(app.server, settings);
  app.addHook('onRequest', refuseUnsafePaths);
  if (settings.requireHttps) app.addHook('onRequest', requireHttpsHook(settings));
  // The admin API's paths, whatever the method: a wrong method there is the API's 404 (JSON), not
  // an unserved http-in path (Express's page) even when both share a root.
  const apiPaths = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 500 });
  const seen = new Set<string>();
  const isApiPath = (path: string) => apiPaths.find('GET', path) !== null;
  services.httpNode.setApiPaths(isApiPath);
  const loginPath = `${settings.httpAdminRoot === '/' ? '' : settings.httpAdminRoot}/auth/token`;
  app.addHook('onRequest', bodyBudget(settings, receiveBudget(app.server, settings.httpServerLimits.bodyBufferTotal), adminBodies(services.auth, isApiPath, loginPath)));
  app.addHook('onRequest', stalledBodies(app.server, settings.httpServerLimits.bodyTimeout));
  app.addHook('onRequest', corsPreflight(settings));
  app.addSchema(errorBody);
  // At the root, so it sees every route of every scope (the OpenAPI document lists them).
  const routes: DeclaredRoute[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  // Where the flows' root holds the admin root, http-in's wildcards see requests for admin paths
  // the admin scope did not take (another case, method or spelling): those never reach a flow.
  const nodeMount = settings.httpNodeRoot.replace(/\/+$/, '').toLowerCase();
  const adminPaths = nodeMount === '' || `${settings.httpAdminRoot.toLowerCase()}/`.startsWith(`${nodeMount}/`) ? new AdminPaths(settings.httpAdminRoot) : undefined;
  // The editor's websocket is the admin's too: another method, or a GET without an upgrade, never reaches a flow.
  if (!settings.disableEditor) adminPaths?.add('GET', `${settings.httpAdminRoot === '/' ? '' : settings.httpAdminRoot}/comms`);
  await app.register(
    async (admin) => {
      if (adminPaths) admin.addHook('onRoute', (route) => [route.method].flat().forEach((method) => adminPaths.add(method, route.url)));
      admin.addHook('onRoute', ({ url }) => {
        if (!seen.has(url)) apiPaths.on('GET', url, () => {});
        seen.add(url);
      });
      admin.setErrorHandler(adminErrorHandler);
      // Routes contributed modules add through RED.httpAdmin, then a JSON 404.
      admin.setNotFoundHandler((request, reply) => dispatchOrNotFound(services.httpAdmin, request, reply));
      await admin.register(formbody, { bodyLimit: settings.apiMaxLength });
      parseJsonWithPositions(admin);
      admin.addHook('onRequest', async (request, reply) => {
        reply.header('X-Content-Type-Options', 'nosniff');
        reply.header('Cache-Control', 'no-store');
        reply.header('X-Request-Id', request.id);
        applyCors(settings, request.headers.origin, reply);
        // The identity provider's form_post comes from its own site; the login's state check guards it.
        const refusal = request.routeOptions.config.crossSiteForm ? undefined : originCheck(request.method, request.headers);
        if (refusal) throw refusal;
      });
      if (settings.httpAdminMiddleware) admin.addHook('onRequest', expressMiddlewareHook(settings.httpAdminMiddleware));
      await admin.register(authRoutes, { services, themeLogin: userTheme.context.login });
      if (services.auth.strategy) await admin.register(strategyRoutes, { login: services.auth.strategy });
      await admin.register(settingsRoutes, { services, editor: () => editorSettings(settings, theme()) });
      await admin.register(flowsRoutes, { services });
      await admin.register(nodesRoutes, { services, resources });
      await admin.register(editorApiRoutes, { services, resources });
      await admin.register(libraryRoutes, { services });
      await admin.register(contextRoutes, { services });
      if (!settings.disableEditor) await admin.register(editorRoutes, { services, theme, resources });
      await admin.register(credentialsRoutes, { services });
      await admin.register(clusterRoutes, { services });
      await admin.register(historyRoutes, { services });
      await admin.register(queuesRoutes, { services });
      await admin.register(flowRoutes, { services });
      await admin.register(healthRoutes, { services });
      await admin.register(openApiRoute, { settings, routes });
      await admin.register(tokensRoutes, { services });
      await admin.register(diagnosticsRoutes, { services });
      if (services.admin.projects) await admin.register(projectsRoutes, { services, projects: services.admin.projects });
      if (metrics && settings.metrics.port === undefined) await admin.register(metricsRoutes, { services, metrics });
    },
    { prefix: settings.httpAdminRoot === '/' ? '' : settings.httpAdminRoot },
  );

  await app.register(httpNodePlugin, {
    services,
    adminRoutes: services.httpAdmin,
    originCheck,
    adminPaths,
    editorAtRoot: !settings.disableEditor && settings.httpAdminRoot === settings.httpNodeRoot,
    ...(settings.httpNodeAuth && typeof settings.httpNodeAuth === 'object' && !Array.isArray(settings.httpNodeAuth) ? { nodeAuth: basicAuthCheck(settings.httpNodeAuth) } : {}),
    routeWait: new RouteWait(() => services.admin.flows.pending(), settings.httpNodeRouteWait),
    ...(settings.httpAdminMiddleware ? { adminMiddleware: expressMiddlewareHook(settings.httpAdminMiddleware) } : {}),
    prefix: settings.httpNodeRoot === '/' ? '' : settings.httpNodeRoot,
  });
  const statics = staticFiles(settings);
  if (statics) {
    services.httpNode.setUnserved(statics);
    services.httpAdmin.setUnserved(statics);
    // Paths under neither root reach Fastify's own not-found handler (the admin's when it is at /).
    if (settings.httpAdminRoot !== '/' && settings.httpNodeRoot !== '/') {
      app.setNotFoundHandler((request, reply) => {
        reply.hijack();
        statics(request.raw, reply.raw, (err) => services.httpNode.respondUnhandled(err, request.raw, reply.raw));
      });
    }
  }
  return app;
}

function withoutListeningLines<L extends { info: unknown }>(log: L): L {
  return Object.create(log, {
    info: {
      value(this: L, ...args: unknown[]) {
        if (typeof args[0] === 'string' && args[0].startsWith('Server listening at ')) return;
        (log.info as (...a: unknown[]) => void).apply(this, args);
      },
    },
  }) as L;
}
