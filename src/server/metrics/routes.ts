import type {} from '@fastify/swagger';
import { createServer, type Server } from 'node:http';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../services.js';
import { needsPermission } from '../../auth/guard.js';
import type { Metrics } from './metrics.js';

/**
 * GET /metrics in Prometheus text format, on the admin API (optionally behind `metrics.permission`),
 * or alone on its own listener when `metrics.port` is set.
 */
export const metricsRoutes: FastifyPluginAsync<{ services: Services; metrics: Metrics }> = async (app, { services, metrics }) => {
  const permission = services.settings.metrics.permission;
  app.get(
    '/metrics',
    {
      ...(permission === undefined ? {} : { onRequest: needsPermission(services.auth, permission) }),
      schema: {
        summary: 'Prometheus metrics (text exposition format)',
        response: { 200: { description: 'The exposition format (text/plain; version=0.0.4)', content: { 'text/plain': { schema: { type: 'string' } } } }, '4xx': { $ref: 'Error#' } },
      },
    },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()),
  );
};

/** The separate metrics listener (`metrics.port`): GET /metrics only, on the same host as the admin API. */
export async function startMetricsListener(metrics: Metrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'not_found', message: 'Only GET /metrics is served here' }));
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'internal_error', message: 'Internal error' })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
