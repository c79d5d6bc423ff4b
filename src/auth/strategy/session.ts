import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CookieOptions } from '../../settings/admin-strategy.js';

/** A login's state lives only across the trip to the identity provider and back. */
const LIFETIME_MS = 10 * 60_000;
/** Browsers keep cookies up to about 4 kB; a session that does not fit is not kept. */
const MAX_COOKIE_CHARS = 3800;

export type SessionData = Record<string, unknown>;

/**
 * The session Passport strategies keep their state in (`req.session[key].state`, the nonce, PKCE
 * verifiers) across the redirect to the provider, held in the browser's cookie: its JSON and expiry,
 * signed with HMAC-SHA256 so it cannot be forged or altered, HttpOnly so no page script reads it.
 * Nothing stays on the server, so abandoned logins cost nothing. Unlike Node-RED's per-process
 * secret, the key is shared by every instance of a cluster: the provider's callback may reach
 * another instance than the one the login started on, with no sticky sessions.
 */
export class CookieSessions {
  constructor(
    private readonly cookie: CookieOptions,
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  /** The session the request's cookie carries, or an empty one when it has none, or a forged, altered or expired one. */
  read(cookieHeader: string | undefined): { data: SessionData; had: boolean } {
    const value = cookieValue(cookieHeader, this.cookie.name);
    if (value === undefined) return { data: {}, had: false };
    const dot = value.lastIndexOf('.');
    const payload = value.slice(0, dot);
    if (dot < 0 || !this.signedBy(payload, value.slice(dot + 1))) return { data: {}, had: true };
    try {
      const { d, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { d: unknown; e: unknown };
      if (typeof e !== 'number' || e < this.now() || typeof d !== 'object' || d === null || Array.isArray(d)) return { data: {}, had: true };
      return { data: d as SessionData, had: true };
    } catch {
      return { data: {}, had: true };
    }
  }

  /**
   * The Set-Cookie value that keeps `data` for the browser's next request; one that clears the
   * cookie when the session is empty now; undefined when there is nothing to keep or clear.
   */
  write(data: SessionData, had: boolean): string | undefined {
    if (Object.keys(data).length === 0) return had ? this.serialise('', 0) : undefined;
    const payload = Buffer.from(JSON.stringify({ d: data, e: this.now() + LIFETIME_MS })).toString('base64url');
    const value = `${payload}.${this.sign(payload)}`;
    if (value.length > MAX_COOKIE_CHARS) return had ? this.serialise('', 0) : undefined;
    return this.serialise(value, this.cookie.maxAge === undefined ? undefined : Math.ceil(this.cookie.maxAge / 1000));
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  private signedBy(payload: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private serialise(value: string, maxAgeSeconds: number | undefined): string {
    const c = this.cookie;
    return [
      `${c.name}=${value}`,
      `Path=${c.path}`,
      ...(c.domain ? [`Domain=${c.domain}`] : []),
      ...(maxAgeSeconds === undefined ? [] : [`Max-Age=${maxAgeSeconds}`]),
      'HttpOnly',
      ...(c.secure ? ['Secure'] : []),
      ...(c.sameSite ? [`SameSite=${c.sameSite}`] : []),
    ].join('; ');
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
