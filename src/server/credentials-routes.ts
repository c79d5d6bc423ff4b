import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../base/errors.js';
import { anyObject } from './schemas.js';

/**
 * GET /credentials/:type/:id — Node-RED's editor view of one node's credentials: text fields in
 * clear, password fields only as `has_<field>`. The type in the path uses '-' for spaces.
 */
export const credentialsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { runtime, auth } = services;
  app.get<{ Params: { type: string; id: string } }>(
    '/credentials/:type/:id',
    {
      onRequest: needsPermission(auth, 'credentials.read'),
      schema: {
        params: { type: 'object', properties: { type: { type: 'string', maxLength: 200 }, id: { type: 'string', maxLength: 200 } }, required: ['type', 'id'] },
        response: { 200: anyObject },
      },
    },
    async (request) => {
      const { type, id } = request.params;
      // The node's own type decides which fields are passwords: read through another type's
      // declarations a password field could come back as text.
      const node = runtime.getFlows().flows.find((n) => n.id === id);
      if (node === undefined) return {};
      if (node.type.replace(/ /g, '-') !== type) throw new RunnelError('not_found', `Node ${id} is not of type ${type}`);
      return runtime.credentials.forEditor(node.type, id);
    },
  );
};
