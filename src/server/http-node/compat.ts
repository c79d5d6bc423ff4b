import type { IncomingMessage, ServerResponse } from 'node:http';
import { ExpressRequest } from './request.js';
import { ExpressResponse } from './response.js';

export { ExpressRequest, ExpressResponse };

/**
 * Options for `http.createServer` that make every request and response carry the Express API
 * from birth, so `decorate` does not have to swap prototypes per request.
 */
export const expressServerOptions = { IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse } as const;

/**
 * Gives a raw request/response pair the Express API that modules and function nodes use, and
 * the per-request fields Express sets (`params`, `body`, `baseUrl`, `originalUrl`, `res`).
 */
export function decorate(rawReq: IncomingMessage, rawRes: ServerResponse, body: unknown): { req: ExpressRequest; res: ExpressResponse } {
  // A server built with expressServerOptions already has the prototypes; swapping costs a map change.
  if (!(rawReq instanceof ExpressRequest)) Object.setPrototypeOf(rawReq, ExpressRequest.prototype);
  if (!(rawRes instanceof ExpressResponse)) Object.setPrototypeOf(rawRes, ExpressResponse.prototype);
  const req = rawReq as ExpressRequest;
  const res = rawRes as ExpressResponse;
  req.res = res;
  req.params = {};
  req.body = body;
  req.baseUrl = '';
  req.originalUrl = req.url ?? '/';
  return { req, res };
}
