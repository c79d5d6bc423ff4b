import type { preHandlerAsyncHookHandler } from 'fastify';
import type { AuthService, Principal } from './types.js';
import { hasPermission } from './permissions.js';
import { statusOf } from '../base/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by needsPermission when authentication is on. */
    user?: Principal;
  }
}

const REALM = 'Bearer realm="runnel"';
/** RFC 6750 §2.1 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export interface BearerFailure {
  ok: false;
  status: number;
  code: 'unauthorized' | 'invalid_token' | 'insufficient_scope';
  message: string;
  /** The `WWW-Authenticate` value to send (RFC 6750 §3). */
  wwwAuthenticate: string;
}

/** `principal` is null when authentication is off. */
export type BearerResult = { ok: true; principal: Principal | null } | BearerFailure;

/**
 * Checks an Authorization header against a permission, without any web framework, so the Fastify
 * guard and the Express-style `RED.auth.needsPermission` for contributed nodes share one rule.
 * Unlike Node-RED, a lacking permission says so (with RFC 6750's insufficient_scope) instead of
 * answering an empty 401.
 */
export async function checkBearer(auth: AuthService, authorization: string | undefined, permission: string): Promise<BearerResult> {
  if (!auth.enabled) return { ok: true, principal: null };
  const anonymous = auth.anonymousScope;
  if (!authorization && anonymous !== undefined && hasPermission(anonymous, permission)) {
    return { ok: true, principal: { username: 'anonymous', scope: [...anonymous], tokenHash: '', anonymous: true } };
  }
  if (!authorization || !/^Bearer(?: |$)/i.test(authorization)) {
    return fail('unauthorized', 'Authentication required: send Authorization: Bearer <token>', REALM);
  }
  const principal = await bearerPrincipal(auth, authorization);
  if (!principal) {
    return fail('invalid_token', 'The access token is invalid, expired or revoked', `${REALM}, error="invalid_token"`);
  }
  if (!hasPermission(principal.scope, permission)) {
    return fail(
      'insufficient_scope',
      `The access token lacks the permission "${permission}"`,
      `${REALM}, error="insufficient_scope", scope="${permission}"`,
    );
  }
  return { ok: true, principal };
}

/** The user a `Bearer` Authorization header's token is valid for, or null. */
export async function bearerPrincipal(auth: AuthService, authorization: string | undefined): Promise<Principal | null> {
  const match = authorization === undefined ? null : BEARER.exec(authorization);
  return match ? auth.authenticate(match[1]) : null;
}

function fail(code: BearerFailure['code'], message: string, wwwAuthenticate: string): BearerFailure {
  return { ok: false, status: statusOf(code), code, message, wwwAuthenticate };
}

/**
 * The route guard. Use it as `onRequest` (or `preHandler`): as onRequest it runs before body
 * parsing and schema validation, so an unauthenticated caller learns nothing about the body rules
 * and never makes the server parse a large body.
 */
export function needsPermission(auth: AuthService, permission: string): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const result = await checkBearer(auth, request.headers.authorization, permission);
    if (result.ok) {
      if (result.principal) request.user = result.principal;
      return;
    }
    void reply
      .code(result.status)
      .header('WWW-Authenticate', result.wwwAuthenticate)
      .type('application/json')
      .send({ code: result.code, message: result.message });
    return reply;
  };
}
