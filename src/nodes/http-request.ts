/**
 * The http request node: maps a message to a request (url, method, headers, cookies, body,
 * authentication) and the response back onto the message; lib/http-client.ts does the sending.
 */
import { stringify as toQueryString } from 'node:querystring';
import { randomBytes } from 'node:crypto';
import type MustacheModule from 'mustache';
import { lazy } from '../base/lazy.js';

const Mustache = lazy<typeof MustacheModule>('mustache');
import { parseSetCookies, perform, setHeader, TimeoutError, type Credentials, type Headers, type Incoming } from './lib/http-client.js';
import { markResponseHeaders, takeResponseMark } from './lib/response-mark.js';
import type { ConnectionOptions } from 'node:tls';
import type { Msg, NodeConfig, RedApi, RedUtil } from '../runtime/red-api/red-api-types.js';
import { proxySelector } from './network/proxy/select.js';
import type { TlsConfigNode } from './network/tls/tls.js';

const DEFAULT_TIMEOUT_MS = 120_000;
const NO_OVERRIDE = 'Warning: msg properties can no longer override set node properties. See bit.ly/nr-override-msg-props';

interface HeaderRule {
  keyType: string;
  keyValue?: string;
  valueType: string;
  valueValue?: string;
}

export default function (RED: RedApi) {
  const settingTimeout = parseInt(String((RED.settings as { httpRequestTimeout?: unknown }).httpRequestTimeout ?? ''), 10);
  const defaultTimeout = settingTimeout > 0 ? settingTimeout : DEFAULT_TIMEOUT_MS;

  class HttpRequestNode extends RED.nodes.Node {
    constructor(config: NodeConfig) {
      super(config);
      const nodeUrl = typeof config.url === 'string' && config.url ? config.url : undefined;
      const templated = nodeUrl !== undefined && nodeUrl.includes('{{');
      if (templated) Mustache().parse(nodeUrl);
      const nodeMethod = typeof config.method === 'string' && config.method ? config.method : 'GET';
      const paytoqs = config.paytoqs === true || config.paytoqs === 'query' ? 'query' : config.paytoqs === 'body' ? 'body' : 'ignore';
      const ret = config.ret === 'bin' || config.ret === 'obj' ? config.ret : 'txt';
      const authType = typeof config.authType === 'string' && config.authType ? config.authType : 'basic';
      // senderr only keeps failed requests off the output: a non-2xx answer is an ordinary response.
      const senderr = config.senderr === true;
      const rules = Array.isArray(config.headers) ? (config.headers as HeaderRule[]) : [];
      const proxyFor = proxySelector(RED, config);
      const tlsNode = config.tls ? (RED.nodes.getNode(String(config.tls)) as TlsConfigNode | null) : null;
      const tlsOptions = tlsNode ? (tlsNode.addTLSOptions({}) as ConnectionOptions) : undefined;

      this.on('input', async (msg, send, done) => {
        this.status({ fill: 'blue', shape: 'dot', text: 'requesting' });
        if (msg.url && nodeUrl && msg.url !== nodeUrl) this.warn(NO_OVERRIDE);
        let url: string = templated ? Mustache().render(nodeUrl, msg) : (nodeUrl ?? msg.url);
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
        // Node-RED warns only when the node itself names a method other than "use".
        if (msg.method && config.method && nodeMethod !== 'use') this.warn(NO_OVERRIDE);
        const method = (nodeMethod === 'use' ? String(msg.method ?? 'GET') : nodeMethod).toUpperCase();

        let timeout = defaultTimeout;
        if (msg.requestTimeout !== undefined) {
          const t = Number(msg.requestTimeout);
          if (Number.isNaN(t)) this.warn('Timeout value is not a valid number, ignoring');
          else if (t < 1) this.warn('Timeout value is negative, ignoring');
          else timeout = t;
        }

        const headers = requestHeaders(msg, rules, RED.util);
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
            method, url, headers, body, timeout, digest, proxyFor, tls: tlsOptions,
            followRedirects: msg.followRedirects !== false,
          });
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
        msg.retry = 0;
        const setCookie = response.headers['set-cookie'];
        if (setCookie) msg.responseCookies = parseSetCookies(setCookie);
        markResponseHeaders(resHeaders);
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

/** msg.headers (unless they are an earlier response's), msg.cookies, then the node's own headers. */
function requestHeaders(msg: Msg, rules: HeaderRule[], util: RedUtil): Headers {
  const headers: Headers = new Map();
  const given = msg.headers;
  if (given && typeof given === 'object') {
    if (!takeResponseMark(given)) {
      for (const name of Object.keys(given)) {
        const value = given[name];
        if (value !== undefined && value !== null) setHeader(headers, name, Array.isArray(value) ? value.map(String) : String(value));
      }
    }
  }
  for (const rule of rules) {
    const name = ruleValue(msg, rule.keyType, rule.keyValue, util);
    const value = ruleValue(msg, rule.valueType, rule.valueValue, util);
    if (!name) continue;
    // An empty value removes a header msg.headers set, as Node-RED's rules do.
    if (value === undefined || value === null || value === '') headers.delete(String(name).toLowerCase());
    else setHeader(headers, String(name), String(value));
  }
  const cookies = cookiePairs(msg.cookies);
  if (cookies.length) {
    const existing = headers.get('cookie')?.[1];
    setHeader(headers, 'Cookie', (existing ? [String(existing), ...cookies] : cookies).join('; '));
  }
  return headers;
}

/** The editor stores a typed-input pair: "other" is a literal, "msg" a property, anything else is itself the value. */
function ruleValue(msg: Msg, type: string, value: string | undefined, util: RedUtil): unknown {
  if (type === 'other') return value;
  if (type === 'msg') return value ? util.getMessageProperty(msg, value) : undefined;
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
