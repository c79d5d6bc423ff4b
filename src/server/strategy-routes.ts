import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { StrategyLogin } from '../auth/strategy/login.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route a page of another site may POST a form to: the identity provider's form_post callback. */
    crossSiteForm?: boolean;
  }
}

/**
 * Node-RED's strategy login routes: GET /auth/strategy sends the browser to the identity provider,
 * which sends it back to /auth/strategy/callback (a GET, or a form POST with `callbackMethod:
 * "post"`). Both answer with a redirect, never an error page: a failed login lands in the editor
 * with `?session_message=`.
 */
export const strategyRoutes: FastifyPluginAsync<{ login: StrategyLogin }> = async (app, { login }) => {
  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = await login.handle({ raw: request.raw, url: request.raw.url ?? request.url, origin: `${request.protocol}://${request.host}`, query: request.query, body: request.body, ip: request.ip, reqId: request.id });
    if (answer.setCookie) void reply.header('Set-Cookie', answer.setCookie);
    return reply.code(answer.status).header('Location', answer.location).send();
  };
  app.get('/auth/strategy', handle);
  app.route({ method: login.callbackMethod, url: '/auth/strategy/callback', config: { crossSiteForm: login.callbackMethod === 'POST' }, handler: handle });
};
