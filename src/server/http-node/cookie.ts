/**
 * Cookie header parsing (cookie-parser's semantics, including `j:` JSON cookies) and Set-Cookie
 * serialisation (the `cookie` package's attribute order), for the Express request/response API.
 */
export interface CookieOptions {
  maxAge?: number;
  expires?: Date;
  path?: string;
  domain?: string;
  secure?: boolean;
  httpOnly?: boolean;
  sameSite?: boolean | 'lax' | 'strict' | 'none' | string;
  partitioned?: boolean;
  priority?: 'low' | 'medium' | 'high' | string;
  signed?: boolean;
  encode?: (value: string) => string;
}

const TOKEN = /^[\u0009\u0020-\u007e\u0080-\u00ff]+$/;

export function parseCookies(header: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    // Keys that would reach Object.prototype are dropped rather than trusted.
    if (!name || name === '__proto__' || Object.prototype.hasOwnProperty.call(out, name)) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value[0] === '"' && value[value.length - 1] === '"') value = value.slice(1, -1);
    out[name] = jsonCookie(decode(value));
  }
  return out;
}

function decode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function jsonCookie(value: string): unknown {
  if (!value.startsWith('j:')) return value;
  try {
    return JSON.parse(value.slice(2));
  } catch {
    return value;
  }
}

export function serializeCookie(name: string, value: string, opts: CookieOptions): string {
  if (!TOKEN.test(name)) throw new TypeError('argument name is invalid');
  const encoded = (opts.encode ?? encodeURIComponent)(value);
  if (encoded && !TOKEN.test(encoded)) throw new TypeError('argument val is invalid');
  let str = `${name}=${encoded}`;
  if (opts.maxAge !== undefined) {
    if (!Number.isFinite(opts.maxAge)) throw new TypeError('option maxAge is invalid');
    str += `; Max-Age=${Math.floor(opts.maxAge)}`;
  }
  if (opts.domain) str += `; Domain=${opts.domain}`;
  if (opts.path) str += `; Path=${opts.path}`;
  if (opts.expires) str += `; Expires=${new Date(opts.expires).toUTCString()}`;
  if (opts.httpOnly) str += '; HttpOnly';
  if (opts.secure) str += '; Secure';
  if (opts.partitioned) str += '; Partitioned';
  if (opts.priority) str += `; Priority=${capitalise(String(opts.priority))}`;
  if (opts.sameSite) str += `; SameSite=${opts.sameSite === true ? 'Strict' : capitalise(String(opts.sameSite))}`;
  return str;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
}
