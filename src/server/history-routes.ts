import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../base/errors.js';
import { deploymentType, readDeploy, requester } from './deploy-request.js';
import { deployHeaders, errorResponses, flowNode, revPattern } from './schemas.js';

/** Revision history, rollback and the deploy preview (issue: operating Runnel). */

const counts = {
  type: 'object',
  required: ['added', 'changed', 'removed'],
  properties: { added: { type: 'integer' }, changed: { type: 'integer' }, removed: { type: 'integer' } },
} as const;

const revisionInfo = {
  type: 'object',
  required: ['seq', 'rev', 'prevRev', 'action', 'type', 'time', 'nodeCount', 'summary'],
  properties: {
    seq: { type: 'integer' },
    rev: { type: 'string' },
    prevRev: { type: 'string' },
    action: { type: 'string', enum: ['deploy', 'reload', 'rollback', 'external'] },
    type: { type: 'string' },
    time: { type: 'integer', description: 'epoch milliseconds' },
    user: { type: 'string' },
    nodeCount: { type: 'integer' },
    summary: { type: 'object', additionalProperties: counts, description: 'per tab id (global: outside tabs)' },
    restoredSeq: { type: 'integer' },
  },
} as const;

const revParams = {
  type: 'object',
  required: ['rev'],
  properties: { rev: { type: 'string', pattern: revPattern } },
} as const;

const idList = { type: 'array', items: { type: 'string' } } as const;

const previewBody = {
  type: 'object',
  required: ['rev', 'type', 'stop', 'start', 'rewire', 'unchanged', 'missingTypes', 'errors', 'credentials'],
  properties: {
    rev: { type: 'string' },
    type: { type: 'string' },
    stop: idList,
    start: idList,
    rewire: idList,
    unchanged: { type: 'integer' },
    missingTypes: idList,
    errors: { type: 'array', items: { $ref: 'Error#' } },
    credentials: {
      type: 'object',
      required: ['added', 'changed', 'removed'],
      properties: { added: idList, changed: idList, removed: idList },
    },
  },
} as const;

/** Problems that make a deploy body unacceptable: the preview lists them instead of failing. */
const BODY_PROBLEMS = new Set(['invalid_flows', 'invalid_credentials', 'credentials_load_failed']);

export const historyRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { auth } = services;
  const { history, flows } = services.admin;
  const read = needsPermission(auth, 'flows.read');

  app.get<{ Querystring: { limit: number; before?: number } }>(
    '/flows/history',
    {
      onRequest: read,
      schema: {
        summary: 'Revisions, newest first; pass `next` as `before` for the following page',
        querystring: {
          type: 'object',
          properties: { limit: { type: 'integer', minimum: 1, maximum: 500, default: 20 }, before: { type: 'integer', minimum: 1 } },
          additionalProperties: false,
        },
        response: {
          200: { type: 'object', required: ['revisions'], properties: { revisions: { type: 'array', items: revisionInfo }, next: { type: 'integer' } } },
          ...errorResponses,
        },
      },
    },
    async (request) => history.listRevisions(request.query.limit, request.query.before),
  );

  app.get<{ Params: { rev: string } }>(
    '/flows/history/:rev',
    {
      onRequest: read,
      schema: {
        summary: "A kept revision's flows (never its credentials)",
        params: revParams,
        response: {
          200: { ...revisionInfo, required: [...revisionInfo.required, 'flows'], properties: { ...revisionInfo.properties, flows: { type: 'array', items: flowNode } } },
          ...errorResponses,
        },
      },
    },
    async (request) => history.getRevision(request.params.rev),
  );

  app.get<{ Params: { rev: string }; Querystring: { to: string } }>(
    '/flows/history/:rev/diff',
    {
      onRequest: read,
      schema: {
        summary: 'Node by node, what changed from one kept revision to another',
        params: revParams,
        querystring: { type: 'object', required: ['to'], properties: { to: { type: 'string', pattern: revPattern } } },
        response: {
          200: {
            type: 'object',
            required: ['from', 'to', 'changes'],
            properties: {
              from: { type: 'string' },
              to: { type: 'string' },
              changes: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'type', 'change'],
                  properties: {
                    id: { type: 'string' },
                    type: { type: 'string' },
                    z: { type: 'string' },
                    change: { type: 'string', enum: ['added', 'removed', 'changed', 'rewired'] },
                    properties: idList,
                  },
                },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => history.diff(request.params.rev, request.query.to),
  );

  app.post<{ Body: { rev: string; expectedRev?: string } }>(
    '/flows/rollback',
    {
      onRequest: needsPermission(auth, 'flows.write'),
      schema: {
        summary: 'Deploys a kept revision, with its credentials, as a new revision',
        headers: deployHeaders,
        body: {
          type: 'object',
          required: ['rev'],
          additionalProperties: false,
          properties: { rev: { type: 'string', pattern: revPattern }, expectedRev: { type: 'string' } },
        },
        response: { 200: { type: 'object', required: ['rev'], properties: { rev: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request) => {
      const type = deploymentType(request);
      if (type === 'reload') throw new RunnelError('invalid_deployment_type', 'A rollback deploys a revision: use full, nodes or flows');
      return history.rollback({ rev: request.body.rev, expectedRev: request.body.expectedRev, type }, requester(request));
    },
  );

  app.post(
    '/flows/preview',
    {
      onRequest: needsPermission(auth, 'flows.write'),
      schema: {
        summary: 'What POST /flows with the same headers and body would stop, start and rewire; changes nothing',
        headers: deployHeaders,
        body: {},
        response: { 200: previewBody, ...errorResponses },
      },
    },
    async (request) => {
      let deploy;
      try {
        deploy = readDeploy(request, 'POST /flows/preview');
        return { ...(await flows.preview(deploy)), errors: [] };
      } catch (e) {
        if (!(e instanceof RunnelError) || !BODY_PROBLEMS.has(e.code)) throw e;
        const type = deploy?.type ?? deploymentType(request);
        const nothing = { added: [], changed: [], removed: [] };
        return { rev: flows.rev(), type, stop: [], start: [], rewire: [], unchanged: 0, missingTypes: [], errors: [{ code: e.code, message: e.message }], credentials: nothing };
      }
    },
  );
};
