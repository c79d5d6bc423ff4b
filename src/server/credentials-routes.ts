import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { anyObject } from './schemas.js';

/**
 * GET /credentials/:type/:id — Node-RED's editor view of one node's credentials: text fields in
 * clear, password fields only as `has_<field>`. The type in the path uses '-' for spaces.
 */
export const credentialsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { admin, auth } = services;
  app.get<{ Params: { type: string; id: string } }>(
    '/credentials/:type/:id',
    {
      onRequest: needsPermission(auth, 'credentials.read'),
      schema: {
        params: { type: 'object', properties: { type: { type: 'string', maxLength: 200 }, id: { type: 'string', maxLength: 200 } }, required: ['type', 'id'] },
        response: { 200: anyObject },
      },
    },
    async (request) => admin.credentials.getForEditor(request.params.type, request.params.id),
  );
};
