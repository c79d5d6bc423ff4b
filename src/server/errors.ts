import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isRunnelError } from '../errors.js';

/**
 * The one error handler of the admin API: every failure becomes `{code, message}` JSON with a 4xx
 * status, whatever threw it (our RunnelError, a Fastify parser error, a schema failure).
 * Anything unexpected is logged in full and answered as a generic 500 without internals.
 */
export function adminErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const { status, code, message } = describe(error);
  if (status >= 500 && code !== 'storage_unavailable') request.log.error({ err: error, reqId: request.id }, 'unexpected error');
  const retryAfter = isRunnelError(error) ? error.details?.retryAfter : undefined;
  if (typeof retryAfter === 'number') reply.header('Retry-After', String(retryAfter));
  if (status === 401 && !reply.hasHeader('www-authenticate')) reply.header('WWW-Authenticate', 'Bearer realm="runnel"');
  void reply.code(status).type('application/json').send({ code, message });
}

interface Described {
  status: number;
  code: string;
  message: string;
}

const FASTIFY_CODES: Record<string, Described> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: 'unsupported_media_type', message: 'Unsupported content type' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'Request body is too large' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: 'invalid_json', message: 'Request body is empty but content type is application/json' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'invalid_json', message: 'Request body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'invalid_request', message: 'Content-Length does not match the body' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { status: 415, code: 'unsupported_media_type', message: 'Expected multipart/form-data' },
  FST_REQ_FILE_TOO_LARGE: { status: 413, code: 'payload_too_large', message: 'Uploaded file is too large' },
  FST_FILES_LIMIT: { status: 400, code: 'invalid_request', message: 'Too many files in the upload' },
  FST_PARTS_LIMIT: { status: 400, code: 'invalid_request', message: 'Too many parts in the upload' },
  FST_FIELDS_LIMIT: { status: 400, code: 'invalid_request', message: 'Too many fields in the upload' },
  FST_PROTO_VIOLATION: { status: 400, code: 'invalid_request', message: 'Prototype pollution attempt in form data' },
  FST_ERR_BAD_URL: { status: 400, code: 'invalid_request', message: 'Malformed URL' },
};

export function describe(error: unknown): Described {
  if (isRunnelError(error)) return { status: error.status, code: error.code, message: error.message };
  const e = error as FastifyError & { validation?: unknown; type?: string };
  if (e && typeof e === 'object') {
    if (e.validation) return { status: 400, code: 'invalid_request', message: e.message };
    if (typeof e.code === 'string' && FASTIFY_CODES[e.code]) return FASTIFY_CODES[e.code];
    // Errors from body parsing in raw-body style libraries carry `type` and `statusCode`.
    if (e.type === 'entity.too.large') return FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE;
    if (e instanceof SyntaxError) return FASTIFY_CODES.FST_ERR_CTP_INVALID_JSON_BODY;
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
      return { status: e.statusCode, code: typeof e.code === 'string' ? e.code.toLowerCase() : 'invalid_request', message: e.message };
    }
  }
  return { status: 500, code: 'internal_error', message: 'Internal error' };
}
