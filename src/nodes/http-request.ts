import http from 'node:http';
import https from 'node:https';
import { createHash, randomBytes } from 'node:crypto';
import { stringify as toQueryString } from 'node:querystring';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import Mustache from 'mustache';
import { Node, type Msg, type NodeConfig } from '../runtime/node.js';
import type { RedApi } from '../runtime/red-api.js';
import { getMessageProperty } from '../runtime/util/index.js';

/**
 * msg.headers of an http request node's output carry this fingerprint, so that an http response
 * or request node further on can tell the headers are the earlier response's, unchanged, and
 * must not be sent again (Node-RED's rule).
 */
export const REQUEST_NODE_HEADER = 'x-node-red-request-node';

/** FNV-1a over the JSON text: cheap, and only compared with itself. */
export function headersFingerprint(headers: Record<string, unknown>): string {
  const text = JSON.stringify(headers);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_REDIRECTS = 21;
const NO_OVERRIDE = 'Warning: msg properties can no longer override set node properties. See bit.ly/nr-override-msg-props';
const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotli = promisify(zlib.brotliDecompress);

type Headers = Map<string, [name: string, value: string | string[]]>;

interface HeaderRule {
  keyType: string;
  keyValue?: string;
  valueType: string;
  valueValue?: string;
}

interface Credentials {
  user?: string;
  password?: string;
}

interface Outgoing {
  method: string;
  url: string;
  headers: Headers;
  body: Buffer | undefined;
  followRedirects: boolean;
  timeout: number;
  digest: Credentials | undefined;
}

interface Incoming {
  statusCode: number;
  statusMessage: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  url: string;
  redirectList: Record<string, unknown>[];
}

class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`Timeout awaiting 'request' for ${ms}ms`);
    this.name = 'TimeoutError';
  }
}

class HTTPError extends Error {
  constructor(status: number, reason: string) {
    super(`Response code ${status} (${reason})`);
    this.name = 'HTTPError';
  }
}

export default function (RED: RedApi) {
  const settingTimeout = parseInt(String((RED.settings as { httpRequestTimeout?: unknown }).httpRequestTimeout ?? ''), 10);
  const defaultTimeout = settingTimeout > 0 ? settingTimeout : DEFAULT_TIMEOUT_MS;

  class HttpRequestNode extends Node {
    constructor(config: NodeConfig) {
      super(config);
      const nodeUrl = typeof config.url === 'string' && config.url ? config.url : undefined;
      const templated = nodeUrl !== undefined && nodeUrl.includes('{{');
      if (templated) Mustache.parse(nodeUrl);
      const nodeMethod = typeof config.method === 'string' && config.method ? config.method : 'GET';
      const paytoqs = config.paytoqs === true || config.paytoqs === 'query' ? 'query' : config.paytoqs === 'body' ? 'body' : 'ignore';
      const ret = config.ret === 'bin' || config.ret === 'obj' ? config.ret : 'txt';
      const authType = typeof config.authType === 'string' && config.authType ? config.authType : 'basic';
      const senderr = config.senderr === true;
      const rules = Array.isArray(config.headers) ? (config.headers as HeaderRule[]) : [];
      if (config.proxy) this.warn('http proxy configuration is not supported: requests are sent directly');
      if (config.tls) this.warn('tls configuration is not supported: https requests use the default trust store');

      this.on('input', async (msg, send, done) => {
        this.status({ fill: 'blue', shape: 'dot', text: 'requesting' });
        if (msg.url && nodeUrl && msg.url !== nodeUrl) this.warn(NO_OVERRIDE);
        let url: string = templated ? Mustache.render(nodeUrl, msg) : (nodeUrl ?? msg.url);
        if (!url || typeof url !== 'string') {
          this.error('No url specified', msg);
          done();
          return;
        }
        if (url.includes('://') && !url.startsWith('http')) {
          this.warn('Invalid transport');
          this.status({ fill: 'red', shape: 'ring', text: 'Invalid transport' });
          done();
          return;
        }
        if (!url.startsWith('http://') && !url.startsWith('https://')) url = `http://${url}`;
        if (msg.method && nodeMethod !== 'use') this.warn(NO_OVERRIDE);
        const method = (nodeMethod === 'use' ? String(msg.method ?? 'GET') : nodeMethod).toUpperCase();

        let timeout = defaultTimeout;
        if (msg.requestTimeout !== undefined) {
          const t = Number(msg.requestTimeout);
          if (Number.isNaN(t)) this.warn('Timeout value is not a valid number, ignoring');
          else if (t < 1) this.warn('Timeout value is negative, ignoring');
          else timeout = t;
        }

        const headers = requestHeaders(msg, rules);
        const credentials = this.credentials as Credentials | undefined;
        let digest: Credentials | undefined;
        if (credentials) {
          if (authType === 'basic' && credentials.user) {
            setHeader(headers, 'Authorization', `Basic ${Buffer.from(`${credentials.user}:${credentials.password ?? ''}`).toString('base64')}`);
          } else if (authType === 'digest' && credentials.user) {
            digest = credentials;
          } else if (authType === 'bearer') {
            setHeader(headers, 'Authorization', `Bearer ${credentials.password ?? ''}`);
          }
        }

        let body: Buffer | undefined;
        const payload = msg.payload;
        if (payload !== undefined && method !== 'HEAD' && (method !== 'GET' || paytoqs === 'body')) {
          body = encodeBody(payload, headers);
        } else if (payload !== undefined && method === 'GET' && paytoqs === 'query') {
          if (typeof payload !== 'object' || payload === null) {
            this.error('Invalid payload', msg);
            done();
            return;
          }
          const qs = toQueryString(payload);
          url += url.includes('?') ? (url.endsWith('?') ? qs : `&${qs}`) : `?${qs}`;
        }

        let response: Incoming;
        try {
          response = await perform({
            method, url, headers, body, timeout, digest,
            followRedirects: msg.followRedirects !== false,
          });
          if (senderr && (response.statusCode < 200 || response.statusCode > 299)) {
            throw Object.assign(new HTTPError(response.statusCode, response.statusMessage), { statusCode: response.statusCode });
          }
        } catch (err) {
          const e = err as Error & { code?: string; statusCode?: number };
          if (e instanceof TimeoutError) {
            this.error('No response from server', msg);
            this.status({ fill: 'red', shape: 'ring', text: 'No response from server' });
          } else {
            this.error(e, msg);
            this.status({ fill: 'red', shape: 'ring', text: e.code ?? e.name });
          }
          msg.payload = `${e.toString()} : ${url}`;
          msg.statusCode = e.code ?? e.statusCode;
          if (!senderr) send(msg);
          done();
          return;
        }

        const resHeaders = response.headers as Record<string, unknown>;
        msg.statusCode = response.statusCode;
        msg.responseUrl = response.url;
        msg.redirectList = response.redirectList;
        const setCookie = response.headers['set-cookie'];
        if (setCookie) msg.responseCookies = parseSetCookies(setCookie);
        resHeaders[REQUEST_NODE_HEADER] = headersFingerprint(resHeaders);
        msg.headers = resHeaders;
        if (ret === 'bin') {
          msg.payload = response.body;
        } else {
          msg.payload = response.body.toString('utf8');
          if (ret === 'obj') {
            try {
              msg.payload = response.statusCode === 204 ? {} : JSON.parse(msg.payload);
            } catch {
              this.warn('JSON parse error');
            }
          }
        }
        this.status({});
        send(msg);
        done();
      });
      this.on('close', () => this.status({}));
    }
  }

  RED.nodes.registerType('http request', HttpRequestNode, {
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
  });
}

function setHeader(headers: Headers, name: string, value: string | string[]): void {
  headers.set(name.toLowerCase(), [name, value]);
}

/** msg.headers (unless they are an earlier response's), msg.cookies, then the node's own headers. */
function requestHeaders(msg: Msg, rules: HeaderRule[]): Headers {
  const headers: Headers = new Map();
  const given = msg.headers;
  if (given && typeof given === 'object') {
    let use = true;
    if (Object.hasOwn(given, REQUEST_NODE_HEADER)) {
      const mark = given[REQUEST_NODE_HEADER];
      delete given[REQUEST_NODE_HEADER];
      use = mark !== headersFingerprint(given);
    }
    if (use) {
      for (const name of Object.keys(given)) {
        const value = given[name];
        if (value !== undefined && value !== null) setHeader(headers, name, Array.isArray(value) ? value.map(String) : String(value));
      }
    }
  }
  for (const rule of rules) {
    const name = ruleValue(msg, rule.keyType, rule.keyValue);
    const value = ruleValue(msg, rule.valueType, rule.valueValue);
    if (name && value !== undefined && value !== null && value !== '') setHeader(headers, String(name), String(value));
  }
  const cookies = cookiePairs(msg.cookies);
  if (cookies.length) {
    const existing = headers.get('cookie')?.[1];
    setHeader(headers, 'Cookie', (existing ? [String(existing), ...cookies] : cookies).join('; '));
  }
  return headers;
}

/** The editor stores a typed-input pair: "other" is a literal, "msg" a property, anything else is itself the value. */
function ruleValue(msg: Msg, type: string, value: string | undefined): unknown {
  if (type === 'other') return value;
  if (type === 'msg') return value ? getMessageProperty(msg, value) : undefined;
  return type;
}

function cookiePairs(cookies: unknown): string[] {
  if (!cookies || typeof cookies !== 'object') return [];
  const pairs: string[] = [];
  for (const [name, cookie] of Object.entries(cookies as Record<string, any>)) {
    if (cookie === null || cookie === undefined || (typeof cookie === 'object' && cookie.value === null)) continue;
    if (typeof cookie === 'object') pairs.push(`${name}=${cookie.encode === false ? String(cookie.value) : encodeURIComponent(String(cookie.value))}`);
    else pairs.push(`${name}=${encodeURIComponent(String(cookie))}`);
  }
  return pairs;
}

/** Node-RED's body rules: strings and Buffers as they are, forms and multipart by content type, else JSON. */
function encodeBody(payload: unknown, headers: Headers): Buffer {
  const contentType = String(headers.get('content-type')?.[1] ?? '').toLowerCase();
  let body: Buffer;
  if (typeof payload === 'string') body = Buffer.from(payload);
  else if (Buffer.isBuffer(payload)) body = payload;
  else if (typeof payload === 'number') body = Buffer.from(String(payload));
  else if (contentType.startsWith('multipart/form-data') && payload && typeof payload === 'object') {
    const boundary = `----RunnelBoundary${randomBytes(12).toString('hex')}`;
    setHeader(headers, headers.get('content-type')?.[0] ?? 'Content-Type', `multipart/form-data; boundary=${boundary}`);
    body = encodeMultipart(payload as Record<string, unknown>, boundary);
  } else if (contentType.startsWith('application/x-www-form-urlencoded')) {
    body = Buffer.from(toQueryString(payload as Record<string, string>));
  } else {
    body = Buffer.from(JSON.stringify(payload) ?? '');
    if (!headers.has('content-type')) setHeader(headers, 'Content-Type', 'application/json');
  }
  if (!headers.has('content-length')) setHeader(headers, 'Content-Length', String(body.length));
  return body;
}

/** Fields are strings, Buffers, `{value, options: {filename, contentType}}` files, or JSON for anything else. */
function encodeMultipart(fields: Record<string, unknown>, boundary: string): Buffer {
  const parts: Buffer[] = [];
  for (const [name, field] of Object.entries(fields)) {
    if (field === undefined || field === null) continue;
    let value: Buffer | string;
    let disposition = `form-data; name="${name}"`;
    let type = '';
    if (typeof field === 'string' || Buffer.isBuffer(field)) value = field;
    else if (typeof field === 'object' && Object.hasOwn(field, 'value')) {
      const file = field as { value: unknown; options?: { filename?: string; contentType?: string } };
      value = Buffer.isBuffer(file.value) ? file.value : String(file.value);
      if (file.options?.filename) disposition += `; filename="${file.options.filename}"`;
      if (file.options?.contentType) type = `Content-Type: ${file.options.contentType}\r\n`;
    } else value = JSON.stringify(field);
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`), Buffer.from(value), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(parts);
}

function parseSetCookies(setCookie: string[]): Record<string, Record<string, string>> {
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
async function perform(out: Outgoing): Promise<Incoming> {
  const deadline = Date.now() + out.timeout;
  const redirectList: Record<string, unknown>[] = [];
  let { method, url, body } = out;
  let challenged = false;
  for (let redirects = 0; ; ) {
    const res = await exchange(method, url, out.headers, body, deadline, out.timeout);
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

function exchange(method: string, url: string, headers: Headers, body: Buffer | undefined, deadline: number, timeout: number) {
  return new Promise<Omit<Incoming, 'url' | 'redirectList'>>((resolve, reject) => {
    const target = new URL(url);
    const outgoing: Record<string, string | string[]> = { 'accept-encoding': 'gzip, deflate, br' };
    for (const [name, value] of headers.values()) outgoing[name] = value;
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(target, { method, headers: outgoing });
    const timer = setTimeout(() => req.destroy(new TimeoutError(timeout)), Math.max(0, deadline - Date.now()));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
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
export function digestAuthorization(challenge: string, credentials: Credentials, method: string, uri: string): string {
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
