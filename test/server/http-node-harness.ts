import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { resolveSettings } from '../../src/settings/settings.js';
import { captureLog } from '../helpers/log.js';
import type { Services } from '../../src/server/services.js';
import { createHttpNodeApp } from '../../src/server/http-node/mounted-app.js';
import { httpNodePlugin } from '../../src/server/http-node/plugin.js';
import { httpServerFactory } from '../../src/server/http-node/server.js';
import type { HttpNodeApp } from '../../src/server/http-node/types.js';

export interface HttpNodeServer {
  app: HttpNodeApp;
  fastify: FastifyInstance;
  base: string;
  logs: string[];
  close(): Promise<void>;
}

export interface StartOptions {
  /** Registers sibling plugins first, the way app.ts registers the admin scope. */
  beforeNode?: (fastify: FastifyInstance) => Promise<void>;
  /** Use Fastify's own server instead of httpServerFactory (the prototype-swapping fallback). */
  plainServer?: boolean;
  /** RED.httpAdmin, passed to the plugin as app.ts would. */
  adminRoutes?: HttpNodeApp;
}

/** A real Fastify server with only the http-node plugin (as app.ts mounts it) on 127.0.0.1:0. */
export async function startHttpNode(raw: Record<string, unknown> = {}, options: StartOptions = {}): Promise<HttpNodeServer> {
  const settings = resolveSettings({ userDir: '/nonexistent', ...raw });
  const { log, raw: logs } = captureLog('info');
  const app = createHttpNodeApp(settings, log);
  const fastify: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    routerOptions: { ignoreTrailingSlash: true },
    serverFactory: options.plainServer ? undefined : httpServerFactory,
  });
  if (options.beforeNode) await options.beforeNode(fastify);
  const services = { settings, log, httpNode: app } as unknown as Services;
  await fastify.register(httpNodePlugin, { services, adminRoutes: options.adminRoutes, prefix: settings.httpNodeRoot === '/' ? '' : settings.httpNodeRoot });
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, fastify, base: `http://127.0.0.1:${port}`, logs, close: () => fastify.close() };
}
