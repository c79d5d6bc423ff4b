import type {} from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from './services.js';
import { needsPermission } from '../auth/guard.js';
import { RunnelError } from '../base/errors.js';
import { noContent } from './schemas.js';

/**
 * Automation tokens for CI/CD: POST /auth/tokens issues one (shown once, stored hashed), GET lists
 * them without secrets, DELETE revokes. A token's scope never exceeds its creator's, now or later.
 */

const tokenInfo = {
  type: 'object',
  required: ['id', 'name', 'scope', 'created', 'createdBy'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    scope: { type: 'array', items: { type: 'string' } },
    created: { type: 'integer', description: 'epoch milliseconds' },
    expires: { type: 'integer', description: 'epoch milliseconds; absent: until revoked' },
    createdBy: { type: 'string', description: 'the user the token acts for: it never does more than they may do now' },
    via: {
      type: 'array',
      description: 'when made with automation tokens: that chain, starting with the one the user made',
      items: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
    },
  },
} as const;

const PERMISSION = /^[A-Za-z0-9*._-]{1,100}$/;
const MAX_PERMISSIONS = 50;

function scopeList(value: unknown): string[] {
  const list = typeof value === 'string' ? value.split(' ').filter(Boolean) : value;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_PERMISSIONS || !list.every((s) => typeof s === 'string' && PERMISSION.test(s))) {
    throw new RunnelError('invalid_request', 'scope must list permissions such as "read" or "flows.write", as a space-separated string or an array');
  }
  return [...new Set(list as string[])];
}

export const tokensRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { auth } = services;

  app.post<{ Body: { name: string; scope: unknown; expiresIn?: number } }>(
    '/auth/tokens',
    {
      onRequest: needsPermission(auth, 'tokens.write'),
      schema: {
        summary: 'Issues an automation token (the secret is in this answer only)',
        body: {
          type: 'object',
          required: ['name', 'scope'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            // Checked by the handler: a type union needs Ajv's allowUnionTypes, and anyOf lets Fastify's
            // coercion turn ["a b"] into "a b".
            scope: { description: 'permissions, as a space-separated string or an array of strings: read, flows.write, nodes.write, *, …' },
            expiresIn: { type: 'integer', minimum: 1, maximum: 10 * 365 * 86400, description: 'seconds; absent: until revoked' },
          },
        },
        response: { 200: { ...tokenInfo, required: [...tokenInfo.required, 'token'], properties: { ...tokenInfo.properties, token: { type: 'string' } } } },
      },
    },
    async (request) => {
      const { name, expiresIn } = request.body;
      const scope = scopeList(request.body.scope);
      const creator = request.user;
      if (!creator) throw new RunnelError('not_found', 'Admin authentication is not enabled');
      const { token, info } = await auth.createAutomationToken(creator, { name, scope, ...(expiresIn === undefined ? {} : { expiresIn }), reqId: request.id });
      return { ...info, token };
    },
  );

  app.get(
    '/auth/tokens',
    {
      onRequest: needsPermission(auth, 'tokens.read'),
      schema: { summary: 'The automation tokens, without their secrets', response: { 200: { type: 'object', required: ['tokens'], properties: { tokens: { type: 'array', items: tokenInfo } } } } },
    },
    async () => ({ tokens: auth.listAutomationTokens() }),
  );

  app.delete<{ Params: { id: string } }>(
    '/auth/tokens/:id',
    {
      onRequest: needsPermission(auth, 'tokens.write'),
      schema: { summary: 'Revokes an automation token', params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 100 } } }, response: { 204: noContent } },
    },
    async (request, reply) => {
      const creator = request.user;
      if (!creator) throw new RunnelError('not_found', 'Admin authentication is not enabled');
      if (!(await auth.revokeAutomationToken(creator, request.params.id, request.id))) throw new RunnelError('not_found', `No automation token has id ${request.params.id}`);
      return reply.code(204).send();
    },
  );
};
