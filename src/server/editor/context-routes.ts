import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { needsPermission } from '../../auth/guard.js';
import { RunnelError } from '../../base/errors.js';
import type { ContextScope } from '../../runtime/context/context.js';
import { encodeObject } from '../../runtime/util/encode.js';
import { contextAnswer, noContentAnswer } from './schemas.js';

const name = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const params = { type: 'object', properties: { id: name, key: name } } as const;
const query = { type: 'object', properties: { store: { type: 'string', minLength: 1, maxLength: 64 } } } as const;
type Params = { id?: string; key?: string };
type Query = { store?: string };
type Request = FastifyRequest<{ Params: Params; Querystring: Query }>;

const call = <T = unknown>(fn: (cb: (err: unknown, value?: unknown) => void) => void) =>
  new Promise<T | undefined>((resolve, reject) => fn((err, value) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(value as T))));

/**
 * The editor's Context sidebar: values of the global, a flow's or a node's context in each store,
 * encoded as the debug sidebar encodes messages (`{msg, format}`), and deleting one key. Only
 * deployed flows and nodes have a context to show.
 */
export const contextRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { auth, runtime } = services;
  const context = runtime.context;
  const stores = () => context.listStores().stores;

  const scopeOf = (scope: 'global' | 'flow' | 'node', id: string | undefined): ContextScope => {
    if (scope === 'global') return context.getGlobalContext();
    const config = runtime.getFlows().flows.find((n) => n.id === id);
    if (scope === 'flow' && config && (config.type === 'tab' || config.type === 'subflow')) return context.getFlowContext(config.id);
    if (scope === 'node' && config && config.type !== 'tab' && config.type !== 'subflow') return context.getNodeContext(config.id, config.z);
    throw new RunnelError('not_found', `No deployed ${scope} ${id}`);
  };
  const storeOf = (request: Request) => {
    const store = request.query.store ?? context.listStores().default;
    if (!stores().includes(store)) throw new RunnelError('not_found', `No context store ${store}`);
    return store;
  };
  const encoded = (value: unknown) => encodeObject({ msg: value });

  const read = (scope: 'global' | 'flow' | 'node') => async (request: Request) => {
    const ctx = scopeOf(scope, request.params.id);
    const { key } = request.params;
    if (key !== undefined) {
      const store = storeOf(request);
      return encoded(await call((cb) => ctx.get(key, store, cb as never)));
    }
    const result: Record<string, Record<string, unknown>> = {};
    for (const store of request.query.store ? [storeOf(request)] : stores()) {
      const values: Record<string, unknown> = {};
      for (const k of (await call<string[]>((cb) => ctx.keys(store, cb as never))) ?? []) values[k] = encoded(await call((cb) => ctx.get(k, store, cb as never)));
      result[store] = values;
    }
    return result;
  };
  const remove = (scope: 'global' | 'flow' | 'node') => async (request: Request, reply: FastifyReply) => {
    const ctx = scopeOf(scope, request.params.id);
    const store = storeOf(request);
    await call((cb) => ctx.set(request.params.key!, undefined, store, cb as never));
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
