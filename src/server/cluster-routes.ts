import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';

const instance = {
  type: 'object',
  required: ['id', 'url', 'version', 'rev', 'state', 'primary', 'lastSeen', 'modules'],
  properties: {
    id: { type: 'string' },
    url: { type: ['string', 'null'] },
    version: { type: 'string' },
    rev: { type: 'string' },
    state: { type: 'string' },
    primary: { type: 'boolean' },
    /** The primary's lease epoch, raised at every change of primary; null for the others. */
    epoch: { type: ['integer', 'null'] },
    /** When the instance last reached the database (its last heartbeat), by the database's clock. */
    lastSeen: { type: 'string' },
    /** By module name: what this instance has loaded, and a change of the shared list in progress or failed here. */
    modules: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['version', 'state'],
        properties: {
          version: { type: ['string', 'null'] },
          state: { type: 'string', enum: ['installed', 'installing', 'removing', 'failed'] },
          wanted: { type: 'string' },
          error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
} as const;

/** GET /cluster: the instances sharing this one's database, from their heartbeats, answered from memory. */
export const clusterRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { admin, auth } = services;
  app.get(
    '/cluster',
    {
      onRequest: needsPermission(auth, 'flows.read'),
      schema: { response: { 200: { type: 'object', required: ['instances'], properties: { instances: { type: 'array', items: instance } } } } },
    },
    async () => ({ instances: await admin.cluster.getInstances() }),
  );
};
