import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';

/**
 * Probes for orchestrators, without authentication and without details: GET /health answers as
 * long as the event loop does (liveness); GET /health/ready answers 200 only when the runtime
 * finds no readiness problem (HealthApi). The reason for a 503 goes to the log, not to the
 * unauthenticated caller.
 */

const status = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok', 'ready', 'unavailable'] } } } as const;

export const healthRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { admin, log } = services;

  app.get('/health', { schema: { summary: 'Liveness: the event loop answers', response: { 200: status } } }, async () => ({ status: 'ok' }));

  app.get(
    '/health/ready',
    { schema: { summary: 'Readiness: storage reachable, flows started, no deploy stuck', response: { 200: status, 503: status } } },
    async (_request, reply) => {
      const problem = await admin.health.readinessProblem();
      if (problem === undefined) return { status: 'ready' };
      log.debug({ problem }, 'not ready');
      return reply.code(503).send({ status: 'unavailable' });
    },
  );
};
