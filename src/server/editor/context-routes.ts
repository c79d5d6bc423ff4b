import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { needsPermission } from '../../auth/guard.js';
import type { ContextKind } from '../../runtime/api/context.js';
import { requester } from '../deploy-request.js';
import { contextAnswer, noContentAnswer } from './schemas.js';

const name = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const params = { type: 'object', properties: { id: name, key: name } } as const;
const query = { type: 'object', properties: { store: { type: 'string', minLength: 1, maxLength: 64 } } } as const;
type Params = { id?: string; key?: string };
type Query = { store?: string };
type Request = FastifyRequest<{ Params: Params; Querystring: Query }>;

/**
 * The editor's Context sidebar: values of the global, a flow's or a node's context in each store,
 * encoded as the debug sidebar encodes messages (`{msg, format}`), and deleting one key (ContextApi).
 */
export const contextRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { auth } = services;
  const context = services.admin.context;
  const target = (scope: ContextKind, request: Request) => ({ scope, id: request.params.id, store: request.query.store });
  const read = (scope: ContextKind) => async (request: Request) =>
    request.params.key === undefined ? context.getValues(target(scope, request)) : context.getValue(target(scope, request), request.params.key);
  const remove = (scope: ContextKind) => async (request: Request, reply: FastifyReply) => {
    await context.delete(target(scope, request), request.params.key!, requester(request));
    return reply.code(204).send();
  };

  const readOpts = { onRequest: needsPermission(auth, 'context.read'), schema: { params, querystring: query, response: contextAnswer } };
  const writeOpts = { onRequest: needsPermission(auth, 'context.write'), schema: { params, querystring: query, response: noContentAnswer } };
  app.get<{ Params: Params; Querystring: Query }>('/context/global', readOpts, read('global'));
  app.get<{ Params: Params; Querystring: Query }>('/context/global/:key', readOpts, read('global'));
  app.delete<{ Params: Params; Querystring: Query }>('/context/global/:key', writeOpts, remove('global'));
  for (const scope of ['flow', 'node'] as const) {
    app.get<{ Params: Params; Querystring: Query }>(`/context/${scope}/:id`, readOpts, read(scope));
    app.get<{ Params: Params; Querystring: Query }>(`/context/${scope}/:id/:key`, readOpts, read(scope));
    app.delete<{ Params: Params; Querystring: Query }>(`/context/${scope}/:id/:key`, writeOpts, remove(scope));
  }
};
