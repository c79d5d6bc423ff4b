import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { pluginSetInfo } from '../registry/info.js';

/** Node-RED's plugin list: every `node-red.plugins` set of the loaded modules and what it registered. */
export const pluginsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const registry = services.runtime.registry;
  app.get('/plugins', { onRequest: needsPermission(services.auth, 'plugins.read') }, async () => registry.allPluginSets().map(pluginSetInfo));
};
