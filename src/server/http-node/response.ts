import { ServerResponse, STATUS_CODES } from 'node:http';
import { serializeCookie, type CookieOptions } from './cookie.js';
import path from 'node:path';
import type ContentDisposition from 'content-disposition';
import { lazy } from '../../base/lazy.js';

const contentDisposition = lazy<typeof ContentDisposition>('content-disposition');
import { defaultCharset, mimeFor } from './mime.js';
import { sendFile, type SendFileCallback, type SendFileOptions } from './send-file.js';
import { stringifyJson, type ResponseOptions } from './app-settings.js';

type HeaderValue = string | number | readonly string[];
const CHARSET = /;\s*charset\s*=/i;
const UTF8_CHARSET = /;\s*charset\s*=\s*"?utf-8"?\s*(;|$)/i;
// encodeurl: characters that may not appear raw in a Location, keeping valid %XX escapes.
const UNSAFE_URL = /(?:[^\x21\x23-\x3B\x3D\x3F-\x5F\x61-\x7A\x7C\x7E]|%(?:[^0-9A-Fa-f]|[0-9A-Fa-f][^0-9A-Fa-f]|$))+/g;

/**
 * The Express response API on top of Node's ServerResponse, written against Express 4's
 * behaviour (send's content types, sendStatus's text bodies, redirect bodies, cookie options).
 * ETags and conditional GETs are generated for files only (sendFile, download).
 */
export class ExpressResponse extends ServerResponse {
  declare private localsObject: Record<string, unknown> | undefined;
  /** The app's response settings (json spaces, etag, …), set per request; undefined = Runnel's defaults. */
  declare appOptions: ResponseOptions | undefined;

  get locals(): Record<string, unknown> {
    return (this.localsObject ??= {});
  }
  set locals(value: Record<string, unknown>) {
    this.localsObject = value;
  }

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  set(field: string | Record<string, HeaderValue>, value?: HeaderValue): this {
    if (typeof field === 'object' && field !== null) {
      for (const key of Object.keys(field)) this.set(key, field[key]);
      return this;
    }
    if (field.toLowerCase() === 'content-type') {
      if (Array.isArray(value)) throw new TypeError('Content-Type cannot be set to an Array');
      let type = String(value);
      if (!CHARSET.test(type) && defaultCharset(type.toLowerCase())) type += '; charset=utf-8';
      this.setHeader(field, type);
    } else {
      this.setHeader(field, Array.isArray(value) ? value.map(String) : String(value));
    }
    return this;
  }

  header(field: string | Record<string, HeaderValue>, value?: HeaderValue): this {
    return this.set(field, value);
  }

  get(field: string): string | number | string[] | undefined {
    return this.getHeader(field);
  }

  append(field: string, value: string | string[]): this {
    const prev = this.getHeader(field);
    if (prev === undefined) return this.set(field, value);
    const list = (Array.isArray(prev) ? prev : [String(prev)]).concat(value);
    return this.set(field, list);
  }

  vary(field: string): this {
    const prev = String(this.getHeader('Vary') ?? '');
    const present = prev.split(',').map((s) => s.trim().toLowerCase());
    if (!present.includes('*') && !present.includes(field.toLowerCase())) this.setHeader('Vary', prev ? `${prev}, ${field}` : field);
    return this;
  }

  type(type: string): this {
    return this.set('Content-Type', type.includes('/') ? type : (mimeFor(type) ?? 'application/octet-stream'));
  }

  contentType(type: string): this {
    return this.type(type);
  }

  location(url: string): this {
    const target = url === 'back' ? String(this.req?.headers.referer ?? '/') : url;
    this.setHeader('Location', target.replace(UNSAFE_URL, encodeURI));
    return this;
  }

  /** send(body), or the legacy send(status) / send(status, body) forms Express 4 still accepts. */
  send(body?: unknown, legacy?: unknown): this {
    let chunk = body;
    if (arguments.length === 2) {
      const statusFirst = typeof body === 'number' || typeof legacy !== 'number';
      this.statusCode = Number(statusFirst ? body : legacy);
      chunk = statusFirst ? legacy : body;
    } else if (typeof chunk === 'number') {
      if (!this.hasHeader('Content-Type')) this.type('txt');
      this.statusCode = chunk;
      chunk = STATUS_CODES[chunk];
    }
    if (typeof chunk === 'string') return this.sendText(chunk, 'text/html; charset=utf-8');
    if (chunk === null) return this.sendText('', 'text/html; charset=utf-8');
    if (Buffer.isBuffer(chunk)) {
      if (!this.hasHeader('Content-Type')) this.setHeader('Content-Type', 'application/octet-stream');
      return this.finishBody(chunk, chunk.length);
    }
    if (typeof chunk === 'object' || typeof chunk === 'boolean') return this.json(chunk);
    return this.finishBody(undefined, 0);
  }

  json(body: unknown, legacy?: unknown): this {
    let value = body;
    if (arguments.length === 2) {
      const statusFirst = typeof body === 'number';
      this.statusCode = Number(statusFirst ? body : legacy);
      value = statusFirst ? legacy : body;
    }
    const text = stringifyJson(value, this.appOptions);
    if (!this.hasHeader('Content-Type')) this.setHeader('Content-Type', 'application/json; charset=utf-8');
    return text === undefined ? this.finishBody(undefined, 0) : this.sendText(text, 'application/json; charset=utf-8');
  }

  /** Node-RED's http response node answers objects through jsonp. */
  jsonp(body: unknown): this {
    const query = (this.req as { query?: Record<string, unknown> } | undefined)?.query;
    let callback = query?.[this.appOptions?.jsonpCallback ?? 'callback'];
    if (Array.isArray(callback)) callback = callback[0];
    if (typeof callback !== 'string' || callback === '') return this.json(body);
    const name = callback.replace(/[^[\]\w$.]/g, '');
    const text = (stringifyJson(body, this.appOptions) ?? '').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
    this.setHeader('X-Content-Type-Options', 'nosniff');
    this.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    return this.sendText(`/**/ typeof ${name} === 'function' && ${name}(${text});`, 'text/javascript; charset=utf-8');
  }

  sendStatus(code: number): this {
    this.statusCode = code;
    this.type('txt');
    return this.sendText(STATUS_CODES[code] ?? String(code), 'text/plain; charset=utf-8');
  }

  redirect(a: string | number, b?: string | number): this {
    let status = 302;
    let url = a;
    if (b !== undefined) {
      status = Number(typeof a === 'number' ? a : b);
      url = typeof a === 'number' ? b : a;
    }
    const address = String(this.location(String(url)).getHeader('Location'));
    const reason = STATUS_CODES[status] ?? String(status);
    const accept = String(this.req?.headers.accept ?? '');
    this.statusCode = status;
    if (accept.includes('text/html') && !accept.includes('text/plain')) {
      const safe = escapeHtml(address);
      this.setHeader('Content-Type', 'text/html; charset=utf-8');
      return this.sendText(`<p>${reason}. Redirecting to <a href="${safe}">${safe}</a></p>`, 'text/html; charset=utf-8');
    }
    this.setHeader('Content-Type', 'text/plain; charset=utf-8');
    return this.sendText(`${reason}. Redirecting to ${address}`, 'text/plain; charset=utf-8');
  }

  cookie(name: string, value: unknown, options: CookieOptions = {}): this {
    if (options.signed) throw new Error('cookieParser("secret") required for signed cookies');
    const opts: CookieOptions = { ...options };
    const text = typeof value === 'object' && value !== null ? `j:${JSON.stringify(value)}` : String(value);
    if (opts.maxAge !== undefined && opts.maxAge !== null) {
      const ms = Number(opts.maxAge);
      if (!Number.isNaN(ms)) {
        opts.expires = new Date(Date.now() + ms);
        opts.maxAge = Math.floor(ms / 1000);
      }
    }
    opts.path ??= '/';
    return this.append('Set-Cookie', serializeCookie(name, text, opts));
  }

  clearCookie(name: string, options: CookieOptions = {}): this {
    const { maxAge: _ignored, ...rest } = options;
    return this.cookie(name, '', { path: '/', ...rest, expires: new Date(1) });
  }

  sendFile(file: string, options?: SendFileOptions | SendFileCallback, callback?: SendFileCallback): void {
    sendFile(this.req, this, file, options, callback);
  }

  /** sendFile with `Content-Disposition: attachment` (Express's argument forms). */
  download(file: string, filename?: string | SendFileOptions | SendFileCallback, options?: SendFileOptions | SendFileCallback, callback?: SendFileCallback): void {
    let done = callback;
    let name: string | undefined;
    let opts: SendFileOptions | undefined;
    if (typeof filename === 'function') done = filename;
    else if (typeof filename === 'object' && filename !== null) {
      opts = filename;
      if (typeof options === 'function') done = options;
    } else {
      name = filename;
      if (typeof options === 'function') done = options;
      else opts = options;
    }
    const headers: Record<string, string | number | string[]> = { 'Content-Disposition': contentDisposition()(name || file) };
    for (const [key, value] of Object.entries(opts?.headers ?? {})) if (key.toLowerCase() !== 'content-disposition') headers[key] = value;
    const full: SendFileOptions = { ...opts, headers };
    sendFile(this.req, this, full.root ? file : path.resolve(file), full, done);
  }

  attachment(filename?: string): this {
    if (filename) this.type(path.extname(filename));
    this.setHeader('Content-Disposition', contentDisposition()(filename));
    return this;
  }

  /** There are no view engines: Express's own error when none is configured, to the callback or the route's next. */
  render(view: string, options?: unknown, callback?: (err: Error) => void): void {
    const done = typeof options === 'function' ? (options as (err: Error) => void) : callback;
    const err = new Error(`No default engine was specified and no extension was provided (view "${view}")`);
    if (done) done(err);
    else (this.req as { next?: (e: unknown) => void }).next?.(err);
  }

  /** A string body: fills in the Content-Type (or its charset) the way Express 4's send does. */
  private sendText(text: string, defaultType: string): this {
    const type = this.getHeader('Content-Type');
    if (type === undefined) this.setHeader('Content-Type', defaultType);
    else if (typeof type === 'string' && !UTF8_CHARSET.test(type)) this.setHeader('Content-Type', withUtf8(type));
    return this.finishBody(text, Buffer.byteLength(text));
  }

  private finishBody(chunk: string | Buffer | undefined, length: number): this {
    const makeEtag = this.appOptions?.etag;
    if (makeEtag && chunk !== undefined) {
      if (!this.hasHeader('ETag')) {
        const tag = makeEtag(chunk);
        if (tag) this.setHeader('ETag', tag);
      }
      if ((this.req as { fresh?: boolean } | undefined)?.fresh) this.statusCode = 304;
    }
    const code = this.statusCode;
    if (code === 204 || code === 304) {
      this.removeHeader('Content-Type');
      this.removeHeader('Content-Length');
      this.removeHeader('Transfer-Encoding');
      this.end();
      return this;
    }
    if (chunk !== undefined) this.setHeader('Content-Length', length);
    if (this.req?.method === 'HEAD' || chunk === undefined) this.end();
    else this.end(chunk);
    return this;
  }
}

function withUtf8(type: string): string {
  const params = type.split(';').filter((p, i) => i === 0 || !/^\s*charset\s*=/i.test(p));
  return `${params.join(';')}; charset=utf-8`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}
