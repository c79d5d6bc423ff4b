import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import parseBasicAuth from 'basic-auth';
import { verify } from '../../auth/bcrypt.js';
import type { BasicAuthUser } from '../../settings-http.js';

/** Checks a request's `Authorization: Basic` credentials against one configured user. */
export type BasicAuthCheck = (req: IncomingMessage) => Promise<boolean>;

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Node-RED's httpNodeAuth/httpStaticAuth check: bcrypt (or its legacy md5 hex). As in Node-RED the
 * last password that matched is remembered (the setting cannot change without a restart), so a
 * client sending the right password pays for bcrypt once, not per request; only its digest is kept.
 */
export function basicAuthCheck({ user, pass }: BasicAuthUser): BasicAuthCheck {
  const md5 = pass.length === 32;
  const userDigest = digest(user);
  let remembered: Buffer | undefined;
  return async (req) => {
    const given = parseBasicAuth(req);
    if (!given) return false;
    const okUser = timingSafeEqual(digest(given.name), userDigest);
    const passDigest = digest(given.pass);
    if (remembered && timingSafeEqual(passDigest, remembered)) return okUser;
    const okPass = md5 ? createHash('md5').update(given.pass, 'utf8').digest('hex') === pass.toLowerCase() : await verify(given.pass, pass);
    if (okPass) remembered = passDigest;
    return okUser && okPass;
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
