import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../base/errors.js';
import { apiVersion, readDeploy, requester } from './deploy-request.js';
import { anyObject, deployHeaders, flowNode, noContent } from './schemas.js';
import { sendFlowsBody } from './flows-body.js';

const flowsBody = {
  description: 'v1: the array of nodes; v2: {flows, rev}',
  anyOf: [
    { type: 'array', items: flowNode },
    { type: 'object', required: ['flows', 'rev'], properties: { flows: { type: 'array', items: flowNode }, rev: { type: 'string' } } },
  ],
} as const;

const stateBody = {
  type: 'object',
  required: ['state'],
  properties: { state: { type: 'string' }, rev: { type: 'string' }, missingTypes: { type: 'array', items: { type: 'string' } }, errors: { type: 'array', items: anyObject } },
} as const;

/** GET/POST /flows and GET /flows/state (spec §4.4, §9). */
export const flowsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { auth } = services;
  const flows = services.admin.flows;

  app.get('/flows', { onRequest: needsPermission(auth, 'flows.read'), schema: { headers: deployHeaders, response: { 200: flowsBody, 304: { type: 'null', description: 'Not modified (If-None-Match matched the rev)' } } } }, async (request, reply) => {
    const version = apiVersion(request);
    return sendFlowsBody(request, reply, flows.getFlowsJson(version), flows.rev(), version);
  });

  app.get('/flows/state', { onRequest: needsPermission(auth, 'flows.read'), schema: { response: { 200: stateBody } } }, async () => flows.getState());

  // Node-RED offers it only when runtimeState.enabled; otherwise the route does not exist (404).
  if (flows.canSetState()) {
    app.post<{ Body: { state?: unknown } }>(
      '/flows/state',
      {
        onRequest: needsPermission(auth, 'flows.write'),
        schema: {
          summary: 'Stops or starts every flow (runtimeState.enabled); a stop survives restarts, deploys meanwhile are saved, not started',
          body: { type: 'object', properties: { state: { type: 'string' } } },
          response: { 200: { type: 'object', required: ['state'], properties: { state: { type: 'string', enum: ['start', 'stop'] } } } },
        },
      },
      async (request) => {
        const { state } = request.body;
        if (state !== 'start' && state !== 'stop') throw new RunnelError('invalid_run_state', `Cannot change flows runtime state to '${String(state)}'`);
        await flows.setState(state, requester(request));
        return { state: flows.getState().state };
      },
    );
  }

  app.post(
    '/flows',
    {
      onRequest: needsPermission(auth, 'flows.write'),
      // The body is validated by readDeploy, which reports the first problem precisely.
      schema: { headers: deployHeaders, body: {}, response: { 200: { type: 'object', required: ['rev'], properties: { rev: { type: 'string' } } }, 204: noContent } },
    },
    async (request, reply) => {
      const { version, ...deploy } = readDeploy(request, 'POST /flows');
      const { rev } = await flows.setFlows(deploy, requester(request));
      return version === 'v1' ? reply.code(204).send() : { rev };
    },
  );
};
