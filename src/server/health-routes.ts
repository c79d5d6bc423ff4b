import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';

/**
 * Probes for orchestrators, without authentication and without details: GET /health answers as
 * long as the event loop does (liveness); GET /health/ready answers 200 only when storage answers,
 * the flows are started and no deploy has been running longer than DEPLOY_BOUND_MS (readiness).
 * The reason for a 503 goes to the log, not to the unauthenticated caller.
 */
const DEPLOY_BOUND_MS = 30_000;
const STORAGE_BOUND_MS = 5_000;

const status = { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok', 'ready', 'unavailable'] } } } as const;

export const healthRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { runtime, storage, log } = services;

  app.get('/health', { schema: { summary: 'Liveness: the event loop answers', response: { 200: status } } }, async () => ({ status: 'ok' }));

  app.get(
    '/health/ready',
    { schema: { summary: 'Readiness: storage reachable, flows started, no deploy stuck', response: { 200: status, 503: status } } },
    async (_request, reply) => {
      const problem = await readinessProblem();
      if (problem === undefined) return { status: 'ready' };
      log.debug({ problem }, 'not ready');
      return reply.code(503).send({ status: 'unavailable' });
    },
  );

  async function readinessProblem(): Promise<string | undefined> {
    if (runtime.getState().state !== 'start') return 'flows are not started';
    const since = runtime.deployingSince;
    if (since !== undefined && Date.now() - since > DEPLOY_BOUND_MS) return 'a deploy has been running too long';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('storage did not answer in time'), STORAGE_BOUND_MS);
    });
    try {
      return await Promise.race([storage.getRuntimeConfig().then(() => undefined, () => 'storage is unreachable'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
};
