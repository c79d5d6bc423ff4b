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

/** An object the route documents in prose (settings, node sets, modules, credentials): any JSON object. */
export const anyObject = { type: 'object', additionalProperties: true } as const;

/** A 204 answer: no body. */
export const noContent = { type: 'null', description: 'No content' } as const;
