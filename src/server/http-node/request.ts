import { IncomingMessage, type ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import type { TLSSocket } from 'node:tls';
import type { Url } from 'node:url';
import isFresh from 'fresh';
import parseurl from 'parseurl';
import proxyaddr from '@fastify/proxy-addr';
import type { TrustFn } from './app-settings.js';
import { parseCookies } from './cookie.js';
import { mimeFor } from './mime.js';
import type { UploadedFile } from './multipart.js';

/**
 * The Express request API on top of Node's IncomingMessage. Requests get this prototype once
 * (see compat.ts); query and cookies are parsed on first read and cached.
 */
export class ExpressRequest extends IncomingMessage {
  declare params: Record<string, string | undefined>;
  declare body: unknown;
  declare baseUrl: string;
  declare originalUrl: string;
  declare route: unknown;
  declare res: ServerResponse;
  declare _body: boolean;
  /** Files of a multipart body, set on http-in routes with uploads enabled (as multer sets them). */
  declare files: UploadedFile[] | undefined;
  declare private parsedQuery: Record<string, unknown> | undefined;
  declare private parsedCookies: Record<string, unknown> | undefined;
  declare private parsedUrl: Url | undefined;

  /**
   * Express's parsed form of the current `req.url` (parseurl's result, which flows read as
   * `req._parsedUrl.pathname`), parsed on first read and again once the url changed.
   */
  get _parsedUrl(): Url | undefined {
    const url = this.url;
    let parsed = this.parsedUrl;
    if (url === undefined) return undefined;
    if (parsed === undefined || (parsed as { _raw?: string })._raw !== url) parsed = this.parsedUrl = parseurl({ url } as IncomingMessage);
    return parsed;
  }
  set _parsedUrl(value: Url | undefined) {
    this.parsedUrl = value;
  }

  /** Express: a conditional GET/HEAD whose validators match what the response is about to carry. */
  get fresh(): boolean {
    const method = this.method;
    const status = this.res?.statusCode ?? 200;
    if (method !== 'GET' && method !== 'HEAD') return false;
    if ((status < 200 || status >= 300) && status !== 304) return false;
    const res = this.res;
    return isFresh(this.headers, { etag: res?.getHeader('ETag') as string | undefined, 'last-modified': res?.getHeader('Last-Modified') as string | undefined });
  }

  get stale(): boolean {
    return !this.fresh;
  }

  get query(): Record<string, unknown> {
    let q = this.parsedQuery;
    if (q === undefined) {
      const url = this.url ?? '';
      const i = url.indexOf('?');
      q = this.parsedQuery = i === -1 ? {} : toPlainObject(parseQueryString(url.slice(i + 1)));
    }
    return q;
  }
  set query(value: Record<string, unknown>) {
    this.parsedQuery = value;
  }

  get cookies(): Record<string, unknown> {
    return (this.parsedCookies ??= parseCookies(this.headers.cookie));
  }
  set cookies(value: Record<string, unknown>) {
    this.parsedCookies = value;
  }

  /** Signed cookies need a secret Runnel does not configure, so there are none. */
  get signedCookies(): Record<string, unknown> {
    return {};
  }

  get(name: string): string | string[] | undefined {
    const key = name.toLowerCase();
    if (key === 'referer' || key === 'referrer') return this.headers.referer ?? this.headers.referrer;
    return this.headers[key];
  }

  header(name: string): string | string[] | undefined {
    return this.get(name);
  }

  get path(): string {
    const url = this.url ?? '/';
    const i = url.indexOf('?');
    return i === -1 ? url : url.slice(0, i);
  }

  /** The app's `trust proxy` (httpServerOptions), set per request; undefined = no proxy is trusted (Express's default). */
  declare trustProxy: TrustFn | undefined;

  /** The peer address, or the client a trusted proxy names in X-Forwarded-For. */
  get ip(): string | undefined {
    const trust = this.trustProxy;
    return trust ? proxyaddr(this, trust) : this.socket?.remoteAddress;
  }

  /** The X-Forwarded-For addresses trusted proxies vouch for, client first (Express's req.ips). */
  get ips(): string[] {
    const trust = this.trustProxy;
    return trust ? proxyaddr.all(this, trust).slice(1).reverse() : [];
  }

  private get fromTrustedProxy(): boolean {
    const trust = this.trustProxy;
    return trust !== undefined && trust(this.socket?.remoteAddress ?? '', 0);
  }

  get protocol(): string {
    const proto = (this.socket as TLSSocket | undefined)?.encrypted ? 'https' : 'http';
    if (!this.fromTrustedProxy) return proto;
    const forwarded = this.headers['x-forwarded-proto'];
    return typeof forwarded === 'string' && forwarded !== '' ? forwarded.split(',')[0].trim() : proto;
  }

  get secure(): boolean {
    return this.protocol === 'https';
  }

  get hostname(): string | undefined {
    const forwarded = this.fromTrustedProxy ? this.headers['x-forwarded-host'] : undefined;
    const host = typeof forwarded === 'string' && forwarded !== '' ? forwarded.split(',')[0].trim() : this.headers.host;
    if (!host) return undefined;
    // An IPv6 literal keeps its colons; only a port after the closing bracket is cut.
    const start = host[0] === '[' ? host.indexOf(']') + 1 : 0;
    const colon = host.indexOf(':', start);
    return colon === -1 ? host : host.slice(0, colon);
  }

  get xhr(): boolean {
    return String(this.headers['x-requested-with'] ?? '').toLowerCase() === 'xmlhttprequest';
  }

  /**
   * type-is: the matching type for the request body's Content-Type, false when none matches,
   * null when the request has no body.
   */
  is(...types: (string | string[])[]): string | false | null {
    const h = this.headers;
    if (h['transfer-encoding'] === undefined && !(Number(h['content-length']) >= 0 && h['content-length'] !== undefined)) return null;
    const actual = mediaType(h['content-type']);
    const wanted = types.flat();
    if (wanted.length === 0) return actual || false;
    if (!actual) return false;
    for (const type of wanted) {
      const expected = normaliseType(type);
      if (expected && mimeMatch(expected, actual)) return type[0] === '+' || type.includes('*') ? actual : type;
    }
    return false;
  }
}

/** Lower-case `type/subtype` of a Content-Type header, without parameters. */
export function mediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

function normaliseType(type: string): string | undefined {
  if (type === 'urlencoded') return 'application/x-www-form-urlencoded';
  if (type === 'multipart') return 'multipart/*';
  if (type[0] === '+') return `*/*${type}`;
  return type.includes('/') ? type.toLowerCase() : mimeFor(type);
}

function mimeMatch(expected: string, actual: string): boolean {
  const [eType, eSub] = expected.split('/');
  const [aType, aSub] = actual.split('/');
  if (!eSub || !aSub) return false;
  if (eType !== '*' && eType !== aType) return false;
  if (eSub.startsWith('*+')) return aSub.endsWith(eSub.slice(1));
  return eSub === '*' || eSub === aSub;
}

/** querystring returns a null-prototype object; handlers expect an ordinary one. */
export function toPlainObject(parsed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(parsed)) {
    if (key !== '__proto__') out[key] = parsed[key];
  }
  return out;
}
