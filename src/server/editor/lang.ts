import type { FastifyRequest } from 'fastify';

/** A BCP 47 tag as the message folders name them (`en-US`, `de`, `zh-TW`). */
const TAG = /^[a-zA-Z]{2,3}(?:-[a-zA-Z0-9]{2,8})*$/;

/** The language a request asks for: `?lng=`, else the first Accept-Language tag, else en-US. */
export function requestLang(request: FastifyRequest): string {
  const query = (request.query as { lng?: unknown } | undefined)?.lng;
  if (typeof query === 'string' && TAG.test(query)) return query;
  const header = String(request.headers['accept-language'] ?? '').split(',')[0].split(';')[0].trim();
  return TAG.test(header) ? header : 'en-US';
}
