import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { requester } from './deploy-request.js';
import { errorResponses } from './schemas.js';

const queue = {
  type: 'object',
  required: ['name', 'depth', 'inFlight', 'bytes', 'oldestAgeMs', 'rates', 'deadLetters', 'consumers'],
  properties: {
    name: { type: 'string' },
    depth: { type: 'integer', description: 'messages stored, in flight included' },
    inFlight: { type: 'integer', description: 'claimed by a queue in node and not yet finished' },
    bytes: { type: 'integer', description: 'size of the stored messages as JSON' },
    oldestAgeMs: { type: ['integer', 'null'] },
    rates: {
      type: 'object',
      required: ['enqueued', 'acknowledged'],
      properties: { enqueued: { type: 'number' }, acknowledged: { type: 'number' } },
      description: 'per second over the last minute, on the instance answering',
    },
    deadLetters: { type: 'integer', description: 'messages the instance answering sent to a dead-letter output since it started' },
    consumers: { type: 'integer', description: 'queue in nodes taking from the queue on the instance answering' },
  },
} as const;

const nameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1 } },
} as const;

/** The durable queues of the queue nodes: listed for operators, purged when a backlog is to be thrown away. */
export const queuesRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { admin, auth } = services;
  app.get(
    '/queues',
    {
      onRequest: needsPermission(auth, 'queues.read'),
      schema: { response: { 200: { type: 'object', required: ['queues'], properties: { queues: { type: 'array', items: queue } } } } },
    },
    async () => ({ queues: await admin.queues.list() }),
  );
  app.delete<{ Params: { name: string } }>(
    '/queues/:name/messages',
    {
      onRequest: needsPermission(auth, 'queues.write'),
      schema: {
        params: nameParams,
        response: { 200: { type: 'object', required: ['purged'], properties: { purged: { type: 'integer' } } }, ...errorResponses },
      },
    },
    async (request) => admin.queues.purge(request.params.name, requester(request)),
  );
};
