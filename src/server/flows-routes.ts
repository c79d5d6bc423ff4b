import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../errors.js';
import { DEPLOYMENT_TYPES, type DeploymentType } from '../runtime/types.js';
import { assertShallow, validateFlows } from './flows-validation.js';
import { sendFlowsBody } from './flows-body.js';

const VERSION_HEADERS = ['runtime-api-version', 'node-red-api-version'];
const TYPE_HEADERS = ['runtime-deployment-type', 'node-red-deployment-type'];

function header(request: FastifyRequest, names: string[]): string | undefined {
  for (const name of names) {
    const value = request.headers[name];
    if (typeof value === 'string') return value.trim();
    if (Array.isArray(value)) return value[0]?.trim();
  }
  return undefined;
}

function apiVersion(request: FastifyRequest): 'v1' | 'v2' {
  const v = header(request, VERSION_HEADERS);
  if (v === undefined || v === '' || v === 'v1') return 'v1';
  if (v === 'v2') return 'v2';
  throw new RunnelError('invalid_api_version', `Invalid API version ${JSON.stringify(v)}: use v1 or v2`);
}

function deploymentType(request: FastifyRequest): DeploymentType {
  const t = header(request, TYPE_HEADERS);
  if (t === undefined || t === '') return 'full';
  if ((DEPLOYMENT_TYPES as readonly string[]).includes(t)) return t as DeploymentType;
  throw new RunnelError('invalid_deployment_type', `Invalid deployment type ${JSON.stringify(t)}: use full, nodes, flows or reload`);
}

/** GET/POST /flows and GET /flows/state (spec §4.4, §9). */
export const flowsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { runtime, auth } = services;

  app.get('/flows', { onRequest: needsPermission(auth, 'flows.read') }, async (request, reply) => {
    const version = apiVersion(request);
    return sendFlowsBody(request, reply, runtime.getFlowsJson(version), runtime.rev, version);
  });

  app.get('/flows/state', { onRequest: needsPermission(auth, 'flows.read') }, async () => runtime.getState());

  app.post(
    '/flows',
    {
      onRequest: needsPermission(auth, 'flows.write'),
      // The body is validated by validateFlows, which reports the first problem precisely.
      schema: { body: {} },
    },
    async (request, reply) => {
      const version = apiVersion(request);
      const type = deploymentType(request);
      const who = { user: request.user?.username, ip: request.ip, reqId: request.id };
      if (type === 'reload') {
        const { rev } = await runtime.deploy({ flows: [], type, ...who });
        return version === 'v1' ? reply.code(204).send() : { rev };
      }
      if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
        throw new RunnelError('unsupported_media_type', 'POST /flows takes a JSON body (Content-Type: application/json)');
      }
      const body = request.body;
      let flows: unknown;
      let rev: string | undefined;
      let credentials: Record<string, unknown> | undefined;
      if (version === 'v1') {
        if (!Array.isArray(body)) throw new RunnelError('invalid_flows', 'A v1 deploy body must be a JSON array of nodes');
        flows = body;
      } else {
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          throw new RunnelError('invalid_flows', 'A v2 deploy body must be an object {flows, rev?, credentials?}');
        }
        const b = body as Record<string, unknown>;
        if (b.rev !== undefined && typeof b.rev !== 'string') throw new RunnelError('invalid_flows', '"rev" must be a string');
        // The runtime compares it with the active rev inside its deploy lock, where no other deploy can intervene.
        rev = b.rev as string | undefined;
        if (!Array.isArray(b.flows)) throw new RunnelError('invalid_flows', '"flows" must be an array of nodes');
        flows = b.flows;
        if (b.credentials !== undefined) {
          if (b.credentials === null || typeof b.credentials !== 'object' || Array.isArray(b.credentials)) {
            throw new RunnelError('invalid_credentials', '"credentials" must be an object');
          }
          assertShallow(b.credentials, '"credentials"');
          credentials = b.credentials as Record<string, unknown>;
        }
      }
      const nodes = validateFlows(flows as unknown[]);
      const result = await runtime.deploy({ flows: nodes, credentials, rev, type, ...who });
      return version === 'v1' ? reply.code(204).send() : { rev: result.rev };
    },
  );
};
