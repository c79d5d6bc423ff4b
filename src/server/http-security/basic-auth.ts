import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import parseBasicAuth from 'basic-auth';
import { verify } from '../../auth/bcrypt.js';
import type { BasicAuthUser } from '../../settings/http.js';

/** Checks a request's `Authorization: Basic` credentials against one configured user (at once when it can). */
export type BasicAuthCheck = (req: IncomingMessage) => boolean | Promise<boolean>;

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Node-RED's httpNodeAuth/httpStaticAuth check: bcrypt (or its legacy md5 hex). As in Node-RED the
 * credentials that last matched are remembered (the setting cannot change without a restart), so
 * a client sending them pays for bcrypt once, and afterwards one hash and a constant-time compare
 * of its Authorization header answer at once; only the header's digest is kept.
 */
export function basicAuthCheck({ user, pass }: BasicAuthUser): BasicAuthCheck {
  const md5 = pass.length === 32;
  let remembered: Buffer | undefined;
  return (req) => {
    const header = req.headers.authorization;
    if (header === undefined) return false;
    const headerDigest = digest(header);
    if (remembered && timingSafeEqual(headerDigest, remembered)) return true;
    const given = parseBasicAuth(req);
    if (!given) return false;
    // The password is checked even for a wrong user name, so both take the same time.
    const okUser = given.name === user;
    if (md5) return remember(okUser && createHash('md5').update(given.pass, 'utf8').digest('hex') === pass.toLowerCase());
    return verify(given.pass, pass).then((ok) => remember(okUser && ok));
    function remember(ok: boolean): boolean {
      if (ok) remembered = headerDigest;
      return ok;
    }
  };
}

/** The 401 Node-RED answers (with its realm), as JSON `{code, message}` like every Runnel error. */
export function sendBasicAuthChallenge(res: ServerResponse): void {
  const text = JSON.stringify({ code: 'unauthorized', message: 'This path needs a user name and password (HTTP basic auth)' });
  res.statusCode = 401;
  res.setHeader('WWW-Authenticate', 'Basic realm="Authorization Required"');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
