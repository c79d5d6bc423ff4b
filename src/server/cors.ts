import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../settings/settings.js';

const ALLOW_HEADERS = 'Authorization,Content-Type,Runtime-API-Version,Runtime-Deployment-Type,Node-RED-API-Version,Node-RED-Deployment-Type';
/** The admin API's own paths, for telling its preflights apart when it shares its root with http-in routes. */
const ADMIN_PATH = /^\/(?:auth\/|flows(?:\/|$|\?)|settings(?:\/|$|\?)|nodes(?:\/|$|\?)|credentials\/|plugins(?:\/|$|\?))/;

/** Adds the CORS headers for `origin` when httpAdminCors allows it; without the setting nothing is added. */
export function applyCors(settings: Settings, origin: string | undefined, reply: FastifyReply): void {
  const cors = settings.httpAdminCors;
  if (!cors || !origin) return;
  const allowed = Array.isArray(cors.origin) ? cors.origin : [cors.origin];
  if (!allowed.includes('*') && !allowed.includes(origin)) return;
  void reply.header('Access-Control-Allow-Origin', allowed.includes('*') && !cors.credentials ? '*' : origin);
  void reply.header('Vary', 'Origin');
  void reply.header('Access-Control-Allow-Methods', 'GET,PUT,POST,DELETE,OPTIONS');
  void reply.header('Access-Control-Allow-Headers', ALLOW_HEADERS);
  if (cors.credentials) void reply.header('Access-Control-Allow-Credentials', 'true');
}

/**
 * An app-level onRequest hook answering CORS preflights for the admin API. It runs before
 * routing because, on a root shared with http-in routes, the http-node wildcard would otherwise
 * take OPTIONS requests for admin paths.
 */
export function corsPreflight(settings: Settings) {
  const root = settings.httpAdminRoot === '/' ? '' : settings.httpAdminRoot.replace(/\/+$/, '');
  const shared = root === (settings.httpNodeRoot === '/' ? '' : settings.httpNodeRoot.replace(/\/+$/, ''));
  // A callback hook (every request passes here; a promise each would cost): answering the
  // preflight ends the request, so `done` is then not called.
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.method !== 'OPTIONS' || !settings.httpAdminCors || request.headers['access-control-request-method'] === undefined) return done();
    const url = request.url;
    if (!url.startsWith(root)) return done();
    const rest = url.slice(root.length) || '/';
    if (rest[0] !== '/' && rest[0] !== '?') return done();
    if (shared && !ADMIN_PATH.test(rest)) return done();
    applyCors(settings, request.headers.origin, reply);
    void reply.header('X-Content-Type-Options', 'nosniff').header('Cache-Control', 'no-store').header('X-Request-Id', request.id);
    void reply.code(204).send();
  };
}
