import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { apiVersion, readDeploy } from './deploy-request.js';

/** GET/POST /flows and GET /flows/state (spec §4.4, §9). */
export const flowsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { runtime, auth } = services;

  app.get('/flows', { onRequest: needsPermission(auth, 'flows.read') }, async (request, reply) => {
    const version = apiVersion(request);
    return reply.type('application/json').send(runtime.getFlowsJson(version));
  });

  app.get('/flows/state', { onRequest: needsPermission(auth, 'flows.read') }, async () => runtime.getState());

  app.post(
    '/flows',
    {
      onRequest: needsPermission(auth, 'flows.write'),
      // The body is validated by readDeploy, which reports the first problem precisely.
      schema: { body: {} },
    },
    async (request, reply) => {
      const { version, ...deploy } = readDeploy(request, 'POST /flows');
      const result = await runtime.deploy(deploy);
      return version === 'v1' ? reply.code(204).send() : { rev: result.rev };
    },
  );
};
