/**
 * The http request node's transport: sends one request with node:http(s), follows redirects,
 * answers one digest challenge and decodes compressed bodies, all within one deadline.
 */
import http from 'node:http';
import https from 'node:https';
import type tls from 'node:tls';
import { tunnelConnection, type Proxy } from '../network/proxy/tunnel.js';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const MAX_REDIRECTS = 21;
const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

/** Keyed by lower-case name; the original spelling is kept for the wire. */
export type Headers = Map<string, [name: string, value: string | string[]]>;

export interface Credentials {
  user?: string;
  password?: string;
}

export interface Outgoing {
  method: string;
  url: string;
  headers: Headers;
  body: Buffer | undefined;
  followRedirects: boolean;
  timeout: number;
  digest: Credentials | undefined;
  /** The proxy for a URL (asked again after each redirect), if any. */
  proxyFor?: (url: string) => Proxy | undefined;
  /** TLS options for https targets (a tls-config node's key material and verification). */
  tls?: tls.ConnectionOptions;
}


export interface Incoming {
  statusCode: number;
  statusMessage: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  url: string;
  redirectList: Record<string, unknown>[];
}

export class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`Timeout awaiting 'request' for ${ms}ms`);
    this.name = 'TimeoutError';
  }
}

/** A transport failure, named and coded as Node-RED's client (got) reports it: flows read err.code. */
class RequestError extends Error {
  readonly code: string;
  constructor(cause: Error & { code?: string }) {
    super(cause.message);
    this.name = 'RequestError';
    this.code = cause.code ?? 'ERR_GOT_REQUEST_ERROR';
  }
}

export function setHeader(headers: Headers, name: string, value: string | string[]): void {
  headers.set(name.toLowerCase(), [name, value]);
}

export function parseSetCookies(setCookie: string[]): Record<string, Record<string, string>> {
  const cookies: Record<string, Record<string, string>> = {};
  for (const line of setCookie) {
    const [pair, ...attributes] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const cookie: Record<string, string> = {};
    for (const attribute of attributes) {
      const i = attribute.indexOf('=');
      if (i > 0) cookie[attribute.slice(0, i).trim()] = safeDecode(attribute.slice(i + 1).trim());
    }
    cookie.value = safeDecode(pair.slice(eq + 1).trim());
    cookies[pair.slice(0, eq).trim()] = cookie;
  }
  return cookies;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Sends the request, following redirects and answering one digest challenge, all within `timeout`. */
export async function perform(out: Outgoing): Promise<Incoming> {
  const deadline = Date.now() + out.timeout;
  const redirectList: Record<string, unknown>[] = [];
  let { method, url, body } = out;
  let challenged = false;
  for (let redirects = 0; ; ) {
    const res = await exchange(method, url, out.headers, body, deadline, out.timeout, out.proxyFor?.(url), out.tls);
    const location = res.headers.location;
    if (out.followRedirects && location && res.statusCode >= 300 && res.statusCode < 400 && res.statusCode !== 304) {
      if (++redirects > MAX_REDIRECTS) throw new Error(`Redirected ${MAX_REDIRECTS} times. Aborting.`);
      const info: Record<string, unknown> = { location };
      if (res.headers['set-cookie']) info.cookies = parseSetCookies(res.headers['set-cookie']);
      redirectList.push(info);
      const next = new URL(location, url);
      if (next.origin !== new URL(url).origin) out.headers.delete('authorization');
      out.headers.delete('cookie');
      if (res.statusCode === 303 && method !== 'GET' && method !== 'HEAD') {
        method = 'GET';
        body = undefined;
        out.headers.delete('content-length');
        out.headers.delete('content-type');
      }
      url = next.href;
      continue;
    }
    const challenge = res.headers['www-authenticate'];
    if (res.statusCode === 401 && out.digest && !challenged && typeof challenge === 'string' && /^digest\s/i.test(challenge)) {
      challenged = true;
      const target = new URL(url);
      setHeader(out.headers, 'Authorization', digestAuthorization(challenge, out.digest, method, target.pathname + target.search));
      continue;
    }
    return { ...res, url, redirectList };
  }
}

function exchange(method: string, url: string, headers: Headers, body: Buffer | undefined, deadline: number, timeout: number, proxy?: Proxy, tlsOptions?: tls.ConnectionOptions) {
  return new Promise<Omit<Incoming, 'url' | 'redirectList'>>((resolve, reject) => {
    const target = new URL(url);
    const outgoing: Record<string, string | string[]> = { 'accept-encoding': 'gzip, deflate, br' };
    for (const [name, value] of headers.values()) outgoing[name] = value;
    let req: http.ClientRequest;
    if (target.protocol === 'https:') {
      const options: https.RequestOptions = { method, headers: outgoing, ...tlsOptions };
      // Without an agent the request takes its socket from createConnection: the tunnel.
      if (proxy) Object.assign(options, { createConnection: tunnelConnection(proxy, target, tlsOptions) });
      req = https.request(target, options);
    } else if (proxy) {
      // A forward proxy takes the absolute URL as the request target.
      if (proxy.authorization) outgoing['proxy-authorization'] = proxy.authorization;
      outgoing.host ??= target.host;
      req = http.request({ host: proxy.url.hostname, port: proxy.url.port || 80, path: target.href, method, headers: outgoing });
    } else req = http.request(target, { method, headers: outgoing });
    const timer = setTimeout(() => req.destroy(new TimeoutError(timeout)), Math.max(0, deadline - Date.now()));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err instanceof TimeoutError ? err : new RequestError(err));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      res.on('end', () => {
        clearTimeout(timer);
        decode(Buffer.concat(chunks), res.headers['content-encoding']).then(
          (decoded) => resolve({ statusCode: res.statusCode ?? 0, statusMessage: res.statusMessage ?? '', headers: res.headers, body: decoded }),
          reject,
        );
      });
    });
    req.end(body);
  });
}

function decode(body: Buffer, encoding: string | undefined): Promise<Buffer> {
  if (body.length === 0) return Promise.resolve(body);
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return gunzip(body);
    case 'deflate':
      return inflate(body);
    case 'br':
      return brotli(body);
    default:
      return Promise.resolve(body);
  }
}

const DIGEST_HASHES: Record<string, string> = { MD5: 'md5', 'SHA-256': 'sha256', 'SHA-512-256': 'sha512-256' };

/** RFC 7616 response to a `WWW-Authenticate: Digest` challenge (qop "auth", or none for RFC 2069 servers). */
function digestAuthorization(challenge: string, credentials: Credentials, method: string, uri: string): string {
  const params: Record<string, string> = {};
  for (const m of challenge.replace(/^digest\s+/i, '').matchAll(/([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    params[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  }
  const algorithm = params.algorithm ?? 'MD5';
  const session = /-sess$/i.test(algorithm);
  const hashName = DIGEST_HASHES[algorithm.replace(/-sess$/i, '').toUpperCase()] ?? 'md5';
  const h = (text: string) => createHash(hashName).update(text).digest('hex');
  const qop = params.qop?.split(',').map((q) => q.trim()).includes('auth') ? 'auth' : undefined;
  const cnonce = randomBytes(8).toString('hex');
  const nc = '00000001';
  const realm = params.realm ?? '';
  const nonce = params.nonce ?? '';
  let ha1 = h(`${credentials.user ?? ''}:${realm}:${credentials.password ?? ''}`);
  if (session) ha1 = h(`${ha1}:${nonce}:${cnonce}`);
  const ha2 = h(`${method}:${uri}`);
  const response = qop ? h(`${ha1}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`) : h(`${ha1}:${nonce}:${ha2}`);
  const fields = [
    `username="${credentials.user ?? ''}"`, `realm="${realm}"`, `nonce="${nonce}"`, `uri="${uri}"`,
    `algorithm=${algorithm}`, `response="${response}"`,
  ];
  if (qop) fields.push(`qop=${qop}`, `nc=${nc}`, `cnonce="${cnonce}"`);
  if (params.opaque !== undefined) fields.push(`opaque="${params.opaque}"`);
  return `Digest ${fields.join(', ')}`;
}
