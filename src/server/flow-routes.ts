import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../base/errors.js';
import { requester } from './deploy-request.js';
import { errorResponses, flowNode } from './schemas.js';

/**
 * Node-RED's single-flow API: GET/PUT/DELETE /flow/:id, POST /flow, GET/PUT /flow/global. Every
 * write is a `flows` deploy of the edited configuration (so only what changed restarts) with a new
 * rev and a revision in the history.
 */

const nodes = { type: 'array', items: flowNode } as const;
const flowShape = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    label: { type: 'string' },
    disabled: { type: 'boolean' },
    info: { type: 'string' },
    env: { type: 'array' },
    nodes,
    configs: nodes,
    subflows: { type: 'array', items: { type: 'object', additionalProperties: true } },
  },
  additionalProperties: true,
} as const;
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200 } } } as const;
const idBody = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;

export const flowRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { auth } = services;
  const flows = services.admin.flows;
  const write = needsPermission(auth, 'flows.write');

  app.get<{ Params: { id: string } }>(
    '/flow/:id',
    {
      onRequest: needsPermission(auth, 'flows.read'),
      schema: { summary: "One tab in Node-RED's shape (or `global`: the global config nodes and subflows)", params: idParams, response: { 200: flowShape, ...errorResponses } },
    },
    async (request) => {
      const flow = flows.getFlow(request.params.id);
      if (flow === undefined) throw new RunnelError('not_found', `No flow (tab) has id ${request.params.id}`);
      return flow;
    },
  );

  app.post<{ Body: Record<string, unknown> }>(
    '/flow',
    { onRequest: write, schema: { summary: 'Adds a tab with its nodes; answers its new id', body: { type: 'object' }, response: { 200: idBody, ...errorResponses } } },
    async (request) => ({ id: await flows.addFlow(request.body, requester(request)) }),
  );

  app.put<{ Params: { id: string }; Body: Record<string, unknown> }>(
    '/flow/:id',
    { onRequest: write, schema: { summary: 'Replaces a tab and its nodes (or the global config nodes and subflows)', params: idParams, body: { type: 'object' }, response: { 200: idBody, ...errorResponses } } },
    async (request) => {
      await flows.updateFlow(request.params.id, request.body, requester(request));
      return { id: request.params.id };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/flow/:id',
    { onRequest: write, schema: { summary: 'Removes a tab and its nodes', params: idParams, response: { 204: { type: 'null' }, ...errorResponses } } },
    async (request, reply) => {
      await flows.removeFlow(request.params.id, requester(request));
      return reply.code(204).send();
    },
  );
};
