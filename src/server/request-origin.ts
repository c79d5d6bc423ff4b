import { isIP } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import type { Settings } from '../settings/settings.js';
import { RunnelError } from '../base/errors.js';

/**
 * Cross-site and DNS-rebinding protection for the admin API.
 *
 * A web page on another origin can send forms and multipart bodies without a CORS preflight, so a
 * state-changing admin request is refused when the browser says it came from elsewhere (`Origin`
 * not this server's own nor an httpAdminCors origin, or `Sec-Fetch-Site` cross-site/same-site with
 * no Origin). Requests with neither header (curl, node-red-admin) pass: a browser always sends one.
 *
 * DNS rebinding makes the attacker's name resolve to 127.0.0.1, so its page is "same-origin" with
 * the server under that name. When the admin API has no authentication the `Host` must therefore
 * be a name we know: an IP literal (rebinding needs a DNS name), `localhost` (and `*.localhost`),
 * uiHost, or one of httpAdminAllowedHosts.
 */
export type OriginCheck = (method: string, headers: IncomingHttpHeaders) => RunnelError | undefined;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `Host` without its port, lower-cased; IPv6 literals lose their brackets. */
function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') === -1 ? undefined : h.indexOf(']'));
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

function hostMatcher(settings: Settings): (name: string) => boolean {
  const exact = new Set<string>(['localhost']);
  const suffixes = ['.localhost'];
  const configured = [settings.uiHost, ...settings.httpAdminAllowedHosts];
  for (const entry of configured) {
    const name = entry.toLowerCase();
    if (name.startsWith('*.')) suffixes.push(name.slice(1));
    else exact.add(name.startsWith('[') ? hostName(name) : name);
  }
  return (name) => isIP(name) !== 0 || exact.has(name) || suffixes.some((s) => name.endsWith(s));
}

export function createOriginCheck(settings: Settings): OriginCheck {
  const cors = settings.httpAdminCors;
  const corsOrigins = cors ? (Array.isArray(cors.origin) ? cors.origin : [cors.origin]) : [];
  const anyOrigin = corsOrigins.includes('*');
  const hostAllowed = settings.adminAuth ? undefined : hostMatcher(settings);
  return (method, headers) => {
    const host = headers.host;
    if (hostAllowed && host !== undefined && !hostAllowed(hostName(host))) {
      return new RunnelError('host_not_allowed', `Host "${host}" is not a name this server answers to without adminAuth; add it to httpAdminAllowedHosts`);
    }
    const upgrade = headers.upgrade !== undefined;
    if (SAFE_METHODS.has(method) && !upgrade) return undefined;
    const origin = headers.origin;
    if (origin !== undefined) {
      if (anyOrigin || corsOrigins.includes(origin) || isOwnOrigin(origin, host)) return undefined;
      return new RunnelError('cross_site_request', `Requests from origin ${origin} may not change this server`);
    }
    const site = headers['sec-fetch-site'];
    if (site === 'cross-site' || site === 'same-site') {
      return new RunnelError('cross_site_request', 'Cross-site requests may not change this server');
    }
    return undefined;
  };
}

function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === new URL(`${url.protocol}//${host}`).host;
  } catch {
    return false;
  }
}
