import type {} from '@fastify/swagger';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../services.js';
import { checkBearer, needsPermission } from '../../auth/guard.js';
import type { AuthService } from '../../auth/types.js';
import type { Settings } from '../../settings/settings.js';
import type { TlsOptions } from '../../settings/http.js';
import { createOriginCheck } from '../request-origin.js';
import { applyServerLimits, checkInterval } from '../request-limits.js';
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

export interface MetricsListenerOptions {
  settings: Settings;
  auth: AuthService;
  host: string;
  port: number;
  /** The main server's TLS options: the listener speaks https like it. */
  tls?: TlsOptions;
}

/**
 * The separate metrics listener (`metrics.port`): GET /metrics only, on the same host as the admin
 * API, with the main server's connection cap and timeouts, its Host check (DNS rebinding without
 * adminAuth), its TLS and `metrics.permission`.
 */
export async function startMetricsListener(metrics: Metrics, { settings, auth, host, port, tls }: MetricsListenerOptions): Promise<Server> {
  const originCheck = createOriginCheck(settings);
  const permission = settings.metrics.permission;
  const answer = (res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const refusal = originCheck('GET', req.headers);
    if (refusal) return answer(res, refusal.status, { code: refusal.code, message: refusal.message });
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      return answer(res, 404, { code: 'not_found', message: 'Only GET /metrics is served here' });
    }
    if (permission !== undefined) {
      const checked = await checkBearer(auth, req.headers.authorization, permission);
      if (!checked.ok) return answer(res, checked.status, { code: checked.code, message: checked.message }, { 'www-authenticate': checked.wwwAuthenticate });
    }
    const text = await metrics.text();
    res.writeHead(200, { 'content-type': metrics.contentType }).end(text);
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handler(req, res).catch(() => answer(res, 500, { code: 'internal_error', message: 'Internal error' }));
  };
  // Header and request timeouts are only enforced as often as connections are checked.
  const options = { connectionsCheckingInterval: checkInterval(settings) };
  const server = tls ? (createHttpsServer({ ...tls, ...options }, listener) as unknown as Server) : createServer(options, listener);
  applyServerLimits(server, settings);
  // Node's header timeout starts with the first byte: a socket that sends none would stay for
  // good. Nothing here streams, so a socket idle for as long as headers may take is closed.
  server.timeout = settings.httpServerLimits.headersTimeout;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
