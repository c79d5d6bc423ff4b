import type { FastifyRequest } from 'fastify';
import { RunnelError } from '../base/errors.js';
import type { Caller } from '../runtime/api/index.js';
import type { Deploy, DeploymentType } from '../runtime/api/flows.js';
import { assertShallow, validateFlows } from './flows-validation.js';

/** Reading a deploy from a request: POST /flows and POST /flows/preview take the same headers and body. */

const VERSION_HEADERS = ['runtime-api-version', 'node-red-api-version'];
const TYPE_HEADERS = ['runtime-deployment-type', 'node-red-deployment-type'];
/** Every deployment type (the compiler checks the list is complete). */
const DEPLOYMENT_TYPES: Record<DeploymentType, true> = { full: true, nodes: true, flows: true, reload: true };

function header(request: FastifyRequest, names: string[]): string | undefined {
  for (const name of names) {
    const value = request.headers[name];
    if (typeof value === 'string') return value.trim();
    if (Array.isArray(value)) return value[0]?.trim();
  }
  return undefined;
}

export function apiVersion(request: FastifyRequest): 'v1' | 'v2' {
  const v = header(request, VERSION_HEADERS);
  if (v === undefined || v === '' || v === 'v1') return 'v1';
  if (v === 'v2') return 'v2';
  throw new RunnelError('invalid_api_version', `Invalid API version ${JSON.stringify(v)}: use v1 or v2`);
}

export function deploymentType(request: FastifyRequest): DeploymentType {
  const t = header(request, TYPE_HEADERS);
  if (t === undefined || t === '') return 'full';
  if (Object.hasOwn(DEPLOYMENT_TYPES, t)) return t as DeploymentType;
  throw new RunnelError('invalid_deployment_type', `Invalid deployment type ${JSON.stringify(t)}: use full, nodes, flows or reload`);
}

/** Who asked, for the audit log and the revision. */
export function requester(request: FastifyRequest): Caller {
  return { user: request.user?.username, ip: request.ip, reqId: request.id };
}

/**
 * The deploy a request asks for. The body is checked completely (shape, node ids, wires, nesting)
 * before anything is touched; a reload ignores it.
 */
export function readDeploy(request: FastifyRequest, route: string): Deploy & { version: 'v1' | 'v2' } {
  const version = apiVersion(request);
  const type = deploymentType(request);
  if (type === 'reload') return { version, flows: [], type };
  if (!request.headers['content-type']?.toLowerCase().startsWith('application/json')) {
    throw new RunnelError('unsupported_media_type', `${route} takes a JSON body (Content-Type: application/json)`);
  }
  const body = request.body;
  if (version === 'v1') {
    if (!Array.isArray(body)) {
      const v2 = body !== null && typeof body === 'object' && 'flows' in body;
      throw new RunnelError('invalid_flows', v2
        ? 'This is a v2 deploy body ({flows, rev?, credentials?}): send it with the header Runtime-API-Version: v2 (without it a deploy is v1, a JSON array of nodes)'
        : 'A v1 deploy body must be a JSON array of nodes (a {flows, rev?, credentials?} body needs the header Runtime-API-Version: v2)');
    }
    return { version, flows: validateFlows(body), type };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new RunnelError('invalid_flows', Array.isArray(body)
      ? 'A v2 deploy body is an object {flows, rev?, credentials?}: put the array in "flows", or send it without the header Runtime-API-Version: v2 (a v1 deploy)'
      : 'A v2 deploy body must be an object {flows, rev?, credentials?}');
  }
  const b = body as Record<string, unknown>;
  if (b.rev !== undefined && typeof b.rev !== 'string') throw new RunnelError('invalid_flows', '"rev" must be a string');
  // The runtime compares it with the active rev inside its deploy lock, where no other deploy can intervene.
  const rev = b.rev as string | undefined;
  if (!Array.isArray(b.flows)) throw new RunnelError('invalid_flows', '"flows" must be an array of nodes');
  let credentials: Record<string, unknown> | undefined;
  if (b.credentials !== undefined) {
    if (b.credentials === null || typeof b.credentials !== 'object' || Array.isArray(b.credentials)) {
      throw new RunnelError('invalid_credentials', '"credentials" must be an object');
    }
    assertShallow(b.credentials, '"credentials"');
    credentials = b.credentials as Record<string, unknown>;
  }
  return { version, flows: validateFlows(b.flows), credentials, ...(rev === undefined ? {} : { rev }), type };
}
