import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../settings/settings.js';
import { RunnelError } from '../../base/errors.js';

/** A Host header fit to put in a Location: a name or address and an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/;

/**
 * requireHttps: a request under httpAdminRoot (at `/` that is every path, as in Node-RED, whose
 * editor app redirects everything reaching it) that came over plain HTTP is redirected to the same
 * URL over https on its default port: the Host header's name without its port, as Node-RED 5 takes
 * Express's req.hostname (4.x kept the port, which is the plain-HTTP one). A TLS-terminating proxy's `X-Forwarded-Proto: https` counts as secure, as Node-RED
 * trusts it for this check. GET and HEAD get Node-RED's 302; other methods 308, which keeps the
 * method and body instead of turning a POST into a GET.
 */
export function requireHttpsHook(settings: Settings) {
  const root = settings.httpAdminRoot === '/' ? '' : settings.httpAdminRoot;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if ((request.raw.socket as TLSSocket).encrypted) return;
    const proto = request.headers['x-forwarded-proto'];
    if (typeof proto === 'string' && proto.split(',')[0].trim().toLowerCase() === 'https') return;
    const url = request.raw.url ?? '/';
    if (root !== '' && !(url.toLowerCase().startsWith(root.toLowerCase()) && ['/', '?', undefined].includes(url[root.length]))) return;
    const host = request.headers.host;
    if (!host || !HOST.test(host)) throw new RunnelError('invalid_request', 'requireHttps: the request has no usable Host header to redirect to');
    return reply.redirect(`https://${host.replace(/:\d+$/, '')}${url}`, request.method === 'GET' || request.method === 'HEAD' ? 302 : 308);
  };
}
