import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isRunnelError, statusOf, type ErrorCode } from '../base/errors.js';
import { drainUnreadBody } from './unread-body.js';

/**
 * Every error answer of the server is made here: `describe` for the admin API (Fastify's errors
 * included), `describeRouteError` for http-in routes and RED.httpNode/httpAdmin handlers. Codes and
 * statuses come from the catalogue in src/base/errors.ts.
 */

/**
 * The one error handler of the admin API: every failure becomes `{code, message}` JSON with a 4xx
 * status, whatever threw it (our RunnelError, a Fastify parser error, a schema failure).
 * Anything unexpected is logged in full and answered as a generic 500 without internals.
 */
export function adminErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const { status, code, message } = describe(error);
  // A lost database and a missing npm are reported where they are found, not faults to trace here.
  if (status >= 500 && code !== 'storage_unavailable' && code !== 'deploy_outcome_unknown' && code !== 'npm_not_found') request.log.error({ err: error, reqId: request.id }, 'unexpected error');
  const retryAfter = isRunnelError(error) ? error.details?.retryAfter : undefined;
  if (typeof retryAfter === 'number') reply.header('Retry-After', String(retryAfter));
  if (status === 401 && !reply.hasHeader('www-authenticate')) reply.header('WWW-Authenticate', 'Bearer realm="runnel"');
  // A busy server (503) closes on purpose; a refused body is drained so the client reads why.
  if (status < 500) drainUnreadBody(request, reply);
  void reply.code(status).type('application/json').send({ code, message });
}

interface Described {
  status: number;
  /** Typed as a catalogued code, so an answer cannot carry one the catalogue lacks. */
  code: ErrorCode;
  message: string;
}

function described(code: ErrorCode, message: string): Described {
  return { status: statusOf(code), code, message };
}

const INTERNAL = described('internal_error', 'Internal error');

const FASTIFY_CODES: Record<string, Described> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: described('unsupported_media_type', 'Unsupported content type'),
  FST_ERR_CTP_BODY_TOO_LARGE: described('payload_too_large', 'Request body is too large'),
  FST_ERR_CTP_EMPTY_JSON_BODY: described('invalid_json', 'Request body is empty but content type is application/json'),
  FST_ERR_CTP_INVALID_JSON_BODY: described('invalid_json', 'Request body is not valid JSON'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: described('invalid_request', 'Content-Length does not match the body'),
  FST_INVALID_MULTIPART_CONTENT_TYPE: described('unsupported_media_type', 'Expected multipart/form-data'),
  FST_REQ_FILE_TOO_LARGE: described('payload_too_large', 'Uploaded file is too large'),
  FST_FILES_LIMIT: described('invalid_request', 'Too many files in the upload'),
  FST_PARTS_LIMIT: described('invalid_request', 'Too many parts in the upload'),
  FST_FIELDS_LIMIT: described('invalid_request', 'Too many fields in the upload'),
  FST_PROTO_VIOLATION: described('invalid_request', 'Prototype pollution attempt in form data'),
  FST_ERR_BAD_URL: described('invalid_request', 'Malformed URL'),
};

export function describe(error: unknown): Described {
  if (isRunnelError(error)) return { status: error.status, code: error.code, message: error.message };
  const e = error as FastifyError & { validation?: unknown; type?: string };
  if (e && typeof e === 'object') {
    if (e.validation) return described('invalid_request', e.message);
    if (typeof e.code === 'string' && FASTIFY_CODES[e.code]) return FASTIFY_CODES[e.code];
    // Errors from body parsing in raw-body style libraries carry `type` and `statusCode`.
    if (e.type === 'entity.too.large') return FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE;
    if (e instanceof SyntaxError) return FASTIFY_CODES.FST_ERR_CTP_INVALID_JSON_BODY;
    // Any other client error of Fastify's keeps to the catalogue's codes (and their statuses).
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
      return described(CODES_BY_STATUS[e.statusCode] ?? 'invalid_request', e.message);
    }
  }
  return INTERNAL;
}

/** Codes for the client errors route handlers raise Express-style (`err.status`), by status. */
const CODES_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 405: 'method_not_allowed',
  409: 'conflict', 412: 'precondition_failed', 413: 'payload_too_large', 415: 'unsupported_media_type',
  416: 'range_not_satisfiable', 429: 'too_many_requests',
};

/**
 * Client errors keep their message (Express's err.status convention) and their status where the
 * catalogue has a code for it; another 4xx is answered as the admin API answers one, a 400
 * `invalid_request`, so a code always comes with its one status. Anything else is a bare 500.
 */
export function describeRouteError(err: unknown): Described {
  if (isRunnelError(err)) return { status: err.status, code: err.code, message: err.message };
  const e = err as { status?: unknown; statusCode?: unknown; message?: unknown } | null;
  const status = Number(e?.status ?? e?.statusCode);
  if (status >= 400 && status < 500) {
    const message = typeof e?.message === 'string' && e.message ? e.message : 'Bad request';
    return described(CODES_BY_STATUS[status] ?? 'invalid_request', message);
  }
  return INTERNAL;
}
