import etag from 'etag';
import proxyaddr from '@fastify/proxy-addr';
import type { RoutingOptions } from './path-pattern.js';

/**
 * The Express app settings (Node-RED's httpServerOptions, or `RED.httpNode.set(…)`) that change
 * how responses are written. Undefined when every one has Runnel's default, which keeps the
 * response path as it is.
 */
export interface ResponseOptions {
  jsonSpaces: string | number | undefined;
  jsonReplacer: ((this: unknown, key: string, value: unknown) => unknown) | (string | number)[] | undefined;
  /** `json escape`: `<`, `>` and `&` as \\u escapes, so JSON can sit inside HTML. */
  jsonEscape: boolean;
  jsonpCallback: string;
  /** Express's `etag fn`: makes a response body's ETag (and answers 304 to a matching conditional GET). */
  etag: ((body: string | Buffer) => string | undefined) | undefined;
  poweredBy: boolean;
}

type Values = Record<string, unknown>;

/** Express's compileETag: true or "weak" → weak, "strong" → strong, a function as given, false → none. */
function etagFn(value: unknown): ResponseOptions['etag'] {
  if (value === true || value === 'weak') return (body) => etag(body, { weak: true });
  if (value === 'strong') return (body) => etag(body, { weak: false });
  if (typeof value === 'function') return (body) => (value as (b: string | Buffer, enc: string) => string | undefined)(body, 'utf8');
  return undefined;
}

export function responseOptions(values: Values): ResponseOptions | undefined {
  const options: ResponseOptions = {
    jsonSpaces: values['json spaces'] as ResponseOptions['jsonSpaces'],
    jsonReplacer: values['json replacer'] as ResponseOptions['jsonReplacer'],
    jsonEscape: values['json escape'] === true,
    jsonpCallback: typeof values['jsonp callback name'] === 'string' ? (values['jsonp callback name'] as string) : 'callback',
    etag: etagFn(values.etag),
    poweredBy: values['x-powered-by'] === true,
  };
  const isDefault = options.jsonSpaces === undefined && options.jsonReplacer === undefined && !options.jsonEscape && options.jsonpCallback === 'callback' && !options.etag && !options.poweredBy;
  return isDefault ? undefined : options;
}

export function routingOptions(values: Values): RoutingOptions {
  return { caseSensitive: values['case sensitive routing'] === true, strict: values['strict routing'] === true };
}

/** Express's stringify: the app's replacer and spaces, and `json escape`. */
export function stringifyJson(value: unknown, options: ResponseOptions | undefined): string | undefined {
  if (!options) return JSON.stringify(value);
  const text = JSON.stringify(value, options.jsonReplacer as (string | number)[] | undefined, options.jsonSpaces);
  return options.jsonEscape && typeof text === 'string'
    ? text.replace(/[<>&]/g, (c) => (c === '<' ? '\\u003c' : c === '>' ? '\\u003e' : '\\u0026'))
    : text;
}

/** Whether the proxy at `addr`, `i` hops from the server, is trusted to say whose request it is. */
export type TrustFn = (addr: string, i: number) => boolean;

/** Express's compileTrust for `trust proxy`: true, a hop count, addresses/CIDRs/names (or a comma list), or a function. */
export function trustProxy(value: unknown): TrustFn | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return () => true;
  if (typeof value === 'number') return (_addr, i) => i < value;
  if (typeof value === 'function') return value as TrustFn;
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : (value as string[]);
  return proxyaddr.compile(list);
}
