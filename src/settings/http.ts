import path from 'node:path';
import { ownCommand } from '../base/own-command.js';
import { SettingsError } from './settings-error.js';

/**
 * Node-RED's HTTP security settings, validated: TLS, basic auth on http-in and static routes,
 * static files, CORS and Express-style middleware. Values keep Node-RED's shapes so nodes reading
 * them through RED.settings (http-in reads httpNodeCors and httpNodeMiddleware) see what they expect.
 */

/** What `https` gives Node's `https.createServer`: key/cert (PEM strings or Buffers), pfx, ca, ... */
export type TlsOptions = Record<string, unknown>;
/** Node-RED's `https`: the options, or a function returning them (or a promise of them). */
export type HttpsSetting = TlsOptions | (() => TlsOptions | Promise<TlsOptions>);
/** An Express-style `(req, res, next)` function. */
export type Middleware = (req: any, res: any, next: (err?: unknown) => void) => unknown;
/** Basic auth: a user name and a bcrypt hash (or Node-RED's legacy 32-character md5 hex). */
export interface BasicAuthUser {
  user: string;
  pass: string;
}
/** One `httpStatic` entry: a directory served at a root under httpStaticRoot. */
export interface StaticMount {
  /** Absolute (a relative path is resolved against the working directory, as userDir is). */
  path: string;
  /** Always starts and ends with '/'. */
  root: string;
  options?: Record<string, unknown>;
  cors?: Record<string, unknown>;
  middleware?: Middleware | Middleware[];
}

export interface HttpSecuritySettings {
  https: HttpsSetting | undefined;
  /** Hours between calls of an `https` function (Node-RED: at most 596); undefined = never. */
  httpsRefreshInterval: number | undefined;
  requireHttps: boolean;
  httpNodeAuth: BasicAuthUser | Middleware | Middleware[] | undefined;
  httpStaticAuth: BasicAuthUser | undefined;
  httpStatic: StaticMount[];
  httpNodeCors: Record<string, unknown> | undefined;
  httpNodeMiddleware: Middleware | Middleware[] | undefined;
  httpAdminMiddleware: Middleware | Middleware[] | undefined;
  /** Node-RED's Express app settings for the node and admin route apps (`trust proxy` is read apart). */
  httpServerOptions: Record<string, unknown>;
}

/** The keys parsed here (httpStaticRoot and httpStaticCors are folded into httpStatic and stay as given). */
export const HTTP_SECURITY_KEYS = [
  'https', 'httpsRefreshInterval', 'requireHttps', 'httpNodeAuth', 'httpStaticAuth', 'httpStatic', 'httpNodeCors',
  'httpNodeMiddleware', 'httpAdminMiddleware',
];


type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const isMiddleware = (v: unknown): v is Middleware | Middleware[] =>
  typeof v === 'function' || (Array.isArray(v) && v.length > 0 && v.every((f) => typeof f === 'function'));

/** Node-RED's formatRoot: a leading and a trailing slash. */
function formatRoot(root: string): string {
  let r = root.startsWith('/') ? root : `/${root}`;
  if (!r.endsWith('/')) r += '/';
  return r;
}

function joinRoots(a: string, b: string): string {
  return formatRoot(`${a}/${b}`.replace(/\/{2,}/g, '/'));
}

function basicAuthUser(v: unknown, key: string): BasicAuthUser {
  const bcrypt = /^\$2[aby]\$\d\d\$.{53}$/;
  if (!isObject(v) || typeof v.user !== 'string' || v.user === '' || typeof v.pass !== 'string' || !(bcrypt.test(v.pass) || /^[0-9a-f]{32}$/i.test(v.pass))) {
    throw new SettingsError(`${key} must be {user, pass} with pass a bcrypt hash (make one with "${ownCommand('hash-pw')}")`);
  }
  return { user: v.user, pass: v.pass };
}

function corsOptions(v: unknown, key: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null || v === false) return undefined;
  if (!isObject(v)) throw new SettingsError(`${key} must be an object of cors options such as {origin: "*", methods: "GET,PUT,POST,DELETE"}`);
  return v;
}

function middleware(v: unknown, key: string): Middleware | Middleware[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isMiddleware(v)) throw new SettingsError(`${key} must be a function (req, res, next) or an array of them, from a .js settings file`);
  return v;
}

function tlsOptions(v: unknown, key = 'https'): TlsOptions {
  if (!isObject(v)) throw new SettingsError(`${key} must be an object with key and cert (or pfx), or a function returning one`);
  const pem = (x: unknown) => typeof x === 'string' || Buffer.isBuffer(x) || (Array.isArray(x) && x.length > 0);
  if (v.pfx !== undefined ? !pem(v.pfx) : !(pem(v.key) && pem(v.cert))) {
    throw new SettingsError(`${key} needs key and cert (PEM strings or Buffers, e.g. fs.readFileSync("server.key")), or pfx`);
  }
  return v;
}

/** Checks the object an `https` setting (or its function) gives; throws SettingsError. */
export function checkTlsOptions(v: unknown): TlsOptions {
  return tlsOptions(v);
}

function staticMounts(raw: Raw, baseDir: string): StaticMount[] {
  const v = raw.httpStatic;
  if (v === undefined || v === null || v === false || v === '') return [];
  const staticRoot = raw.httpStaticRoot === undefined ? '/' : raw.httpStaticRoot;
  if (typeof staticRoot !== 'string') throw new SettingsError('httpStaticRoot must be a path such as "/static/"');
  const sharedCors = corsOptions(raw.httpStaticCors, 'httpStaticCors');
  const list = Array.isArray(v) ? v : [v];
  return list.map((entry, i) => {
    const where = Array.isArray(v) ? `httpStatic[${i}]` : 'httpStatic';
    if (typeof entry === 'string' && entry !== '') return { path: path.resolve(baseDir, entry), root: formatRoot(staticRoot), ...(sharedCors ? { cors: sharedCors } : {}) };
    if (!isObject(entry) || typeof entry.path !== 'string' || entry.path === '') {
      throw new SettingsError(`${where} must be a directory path or {path, root, options}`);
    }
    if (entry.root !== undefined && typeof entry.root !== 'string') throw new SettingsError(`${where}.root must be a path such as "/files/"`);
    if (entry.options !== undefined && !isObject(entry.options)) throw new SettingsError(`${where}.options must be an object (express.static's options)`);
    const cors = corsOptions(entry.cors, `${where}.cors`) ?? sharedCors;
    const mw = middleware(entry.middleware, `${where}.middleware`);
    return {
      path: path.resolve(baseDir, entry.path),
      root: joinRoots(formatRoot(staticRoot), (entry.root as string | undefined) || '/'),
      ...(entry.options ? { options: entry.options as Raw } : {}),
      ...(cors ? { cors } : {}),
      ...(mw ? { middleware: mw } : {}),
    };
  });
}

const SERVER_OPTION_CHECKS: Record<string, [(v: unknown) => boolean, string]> = {
  'case sensitive routing': [(v) => typeof v === 'boolean', 'true or false'],
  'strict routing': [(v) => typeof v === 'boolean', 'true or false'],
  'json escape': [(v) => typeof v === 'boolean', 'true or false'],
  'x-powered-by': [(v) => typeof v === 'boolean', 'true or false'],
  'json spaces': [(v) => typeof v === 'string' || (typeof v === 'number' && v >= 0), 'a number or a string'],
  'json replacer': [(v) => typeof v === 'function' || Array.isArray(v), 'a function or an array of keys'],
  'jsonp callback name': [(v) => typeof v === 'string' && v !== '', 'a query parameter name'],
  etag: [(v) => typeof v === 'boolean' || v === 'weak' || v === 'strong' || typeof v === 'function', 'true, false, "weak", "strong" or a function'],
};

function serverOptions(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new SettingsError('httpServerOptions must be an object of Express app settings');
  for (const [key, [check, what]] of Object.entries(SERVER_OPTION_CHECKS)) {
    if (v[key] !== undefined && !check(v[key])) throw new SettingsError(`httpServerOptions[${JSON.stringify(key)}] must be ${what}`);
  }
  return v;
}

/** Validates Node-RED's HTTP security settings; throws SettingsError with a one-line reason. */
export function parseHttpSecurity(raw: Raw, baseDir: string): HttpSecuritySettings {
  const https = raw.https;
  if (https !== undefined && https !== null && https !== false && typeof https !== 'function') tlsOptions(https);
  const interval = raw.httpsRefreshInterval;
  let httpsRefreshInterval: number | undefined;
  if (interval !== undefined && interval !== null && interval !== false) {
    const hours = typeof interval === 'number' ? interval : parseFloat(String(interval));
    if (!(Number.isFinite(hours) && hours > 0)) throw new SettingsError('httpsRefreshInterval must be a positive number of hours');
    if (typeof https !== 'function') throw new SettingsError('httpsRefreshInterval needs https to be a function that returns the key and cert');
    httpsRefreshInterval = Math.min(hours, 596);
  }
  if (raw.requireHttps !== undefined && typeof raw.requireHttps !== 'boolean') throw new SettingsError('requireHttps must be true or false');
  const nodeAuth = raw.httpNodeAuth;
  return {
    https: https ? (https as HttpsSetting) : undefined,
    httpsRefreshInterval,
    requireHttps: raw.requireHttps === true,
    httpNodeAuth: nodeAuth === undefined || nodeAuth === null ? undefined : isMiddleware(nodeAuth) ? nodeAuth : basicAuthUser(nodeAuth, 'httpNodeAuth'),
    httpStaticAuth: raw.httpStaticAuth === undefined || raw.httpStaticAuth === null ? undefined : basicAuthUser(raw.httpStaticAuth, 'httpStaticAuth'),
    httpStatic: staticMounts(raw, baseDir),
    httpNodeCors: corsOptions(raw.httpNodeCors, 'httpNodeCors'),
    httpNodeMiddleware: middleware(raw.httpNodeMiddleware, 'httpNodeMiddleware'),
    httpAdminMiddleware: middleware(raw.httpAdminMiddleware, 'httpAdminMiddleware'),
    httpServerOptions: serverOptions(raw.httpServerOptions),
  };
}
