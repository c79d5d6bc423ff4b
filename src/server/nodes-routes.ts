import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../errors.js';
import { moduleInfo, setInfo } from '../registry/info.js';

const moduleParams = {
  type: 'object',
  properties: { module: { type: 'string', minLength: 1, maxLength: 214 } },
  required: ['module'],
} as const;

/** The node registry: list node sets and read one module (spec §2.5). */
export const nodesRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { runtime, auth } = services;
  const registry = runtime.registry;

  app.get('/nodes', { onRequest: needsPermission(auth, 'nodes.read') }, async () => registry.allSets().map(setInfo));

  const getModule = async (name: string) => {
    const mod = registry.modules.get(name);
    if (!mod) throw new RunnelError('not_found', `Module ${name} is not installed`, 404);
    return moduleInfo(mod);
  };
  app.get<{ Params: { module: string } }>('/nodes/:module', { onRequest: needsPermission(auth, 'nodes.read'), schema: { params: moduleParams } }, async (request) =>
    getModule(request.params.module),
  );
  app.get<{ Params: { scope: string; module: string } }>(
    '/nodes/@:scope/:module',
    { onRequest: needsPermission(auth, 'nodes.read') },
    async (request) => getModule(`@${request.params.scope}/${request.params.module}`),
  );
};
