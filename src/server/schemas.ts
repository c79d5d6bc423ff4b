/**
 * JSON schemas shared by the admin routes: the error body every 4xx/5xx carries, and the pieces
 * several routes declare. Route files keep their own shapes next to their handlers.
 */

export const errorBody = {
  $id: 'Error',
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' } },
} as const;

/** The error responses of a route: `{code, message}` for any 4xx or 5xx. */
export const errorResponses = { '4xx': { $ref: 'Error#' }, '5xx': { $ref: 'Error#' } } as const;

export const revPattern = '^[0-9a-f]{64}$';

/** A node of a flow configuration: any properties, an `id` and a `type`. */
export const flowNode = {
  type: 'object',
  required: ['id', 'type'],
  properties: { id: { type: 'string' }, type: { type: 'string' }, z: { type: 'string' } },
  additionalProperties: true,
} as const;

const version = { type: 'string', description: 'v1 (default) or v2' } as const;
const deploymentType = { type: 'string', description: 'full (default), nodes, flows or reload' } as const;

/**
 * The API version and deployment type headers (Node-RED's names are aliases). Checked by the
 * handlers, which answer invalid_api_version / invalid_deployment_type; declared for the document.
 */
export const deployHeaders = {
  type: 'object',
  properties: {
    'runtime-api-version': version,
    'runtime-deployment-type': deploymentType,
    'node-red-api-version': version,
    'node-red-deployment-type': deploymentType,
  },
} as const;

/** An object the route documents in prose (settings, credentials): any JSON object. */
export const anyObject = { type: 'object', additionalProperties: true } as const;

/** A 204 answer: no body. */
export const noContent = { type: 'null', description: 'No content' } as const;

/** A node set as GET /nodes lists it (Node-RED's Node Set object). */
export const nodeSet = {
  type: 'object',
  required: ['id', 'name', 'types', 'enabled', 'module'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    types: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean' },
    loaded: { type: 'boolean' },
    local: { type: 'boolean' },
    user: { type: 'boolean' },
    module: { type: 'string' },
    version: { type: 'string' },
    err: { type: 'string' },
  },
  additionalProperties: true,
} as const;

/** A module as GET /nodes/:module and POST /nodes answer it (Node-RED's Node Module object). */
export const nodeModule = {
  type: 'object',
  required: ['name', 'nodes'],
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    local: { type: 'boolean' },
    user: { type: 'boolean' },
    path: { type: 'string' },
    nodes: { type: 'array', items: nodeSet },
    plugins: { type: 'array', items: { type: 'object', additionalProperties: true }, description: 'its plugin sets (node-red.plugins), as GET /plugins lists them' },
  },
  additionalProperties: true,
} as const;
