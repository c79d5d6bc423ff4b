import type { FastifyReply, FastifyRequest } from 'fastify';
import { RunnelError } from '../base/errors.js';

/** NUL or a backslash in a path, as it is or percent-encoded. */
const UNSAFE = /\\|%00|%5c/i;

/**
 * A path holding NUL or a backslash is refused with 400 before any route sees it: a file system
 * or a proxy may end the path at NUL or read `\` as `/` (`/\flows` is `//flows` to a browser and
 * to Windows), so such a path names one thing here and another there. `/flows%00` and `/\flows`
 * reached a flow's catch-all route beside the admin API.
 */
export function refuseUnsafePaths(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const url = request.raw.url ?? '/';
  const q = url.indexOf('?');
  if (UNSAFE.test(q === -1 ? url : url.slice(0, q))) return done(new RunnelError('invalid_request', 'A path may not hold NUL or a backslash, as they are or percent-encoded'));
  done();
}
