import { createServer as createHttpsServer } from 'node:https';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Settings } from '../../settings/settings.js';
import type { Logger } from '../../base/log.js';
import type { RouteApp, RouteHandler } from '../../runtime/red-api/http-types.js';
import type { Services } from '../services.js';
import { RunnelError, statusOf } from '../../base/errors.js';
import { adminErrorHandler, describeRouteError } from '../errors.js';
import { ExpressRouter, type Fallthrough } from './router.js';
import { decorate, ExpressRequest, expressServerOptions } from './compat.js';
import { parseBody, uploadRouteBody, isMultipart, type BodyMode } from './body.js';
import { parseMultipart } from './multipart.js';
import { compilePath } from './path-pattern.js';
import type { LinearRegExp } from './linear-regexp.js';
import type { OriginCheck } from '../request-origin.js';
import type { AdminPaths } from '../admin-paths.js';
import { sendExpressNotFound, sendJson } from './not-found.js';
import { responseOptions, routingOptions, trustProxy, type ResponseOptions, type TrustFn } from './app-settings.js';
import { sendBasicAuthChallenge, type BasicAuthCheck } from '../http-security/basic-auth.js';
import type { RouteWait } from './route-wait.js';

/** RED.httpNode / RED.httpAdmin: an Express-style router that raw requests are handed to. */
export interface HttpNodeApp extends RouteApp {
  /** The root the app is mounted at ('' for '/'); stripped from req.url like an Express mount. */
  readonly mountPath: string;
  /** Whether a request URL lies under mountPath. */
  covers(url: string): boolean;
  /** Runs a request through the routes; `fallthrough` runs only if no handler answered it. */
  dispatch(req: IncomingMessage, res: ServerResponse, body: unknown, fallthrough: Fallthrough): void;
  /** dispatch, answering whatever falls through with a JSON 404 or error. */
  serve(req: IncomingMessage, res: ServerResponse, body: unknown): void;
  /** Answers an unhandled outcome: undefined = no route (404), anything else = an error. */
  respondUnhandled(err: unknown, req: IncomingMessage, res: ServerResponse): void;
  /**
   * Has requests for this method and route path read their body another way (http-in's
   * skipBodyParsing and upload options); the returned function undoes it.
   */
  setBodyMode(method: string, path: string, mode: BodyMode): () => void;
  /** Whether any route or middleware could take a request for `path` (relative to mountPath), by `method` if given. */
  mayHandle(path: string, method?: string): boolean;
  /** What answers a request no route took (httpStatic's files) before the 404; it calls `next` when it does not. */
  setUnserved(handler: UnservedHandler): void;
  /** The body mode for a request, undefined for the usual parsing. */
  bodyModeOf(method: string, url: string): BodyMode | undefined;
  /** Paths of the admin API sharing this root: an unserved request there is the API's, answered in JSON. */
  setApiPaths(isApiPath: (path: string) => boolean): void;
}

/** Express-style middleware run after the routes: answers, or calls next (with an error, or none for 404). */
export type UnservedHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

interface BodyRoute {
  method: string;
  matcher: LinearRegExp;
  mode: BodyMode;
}

class MountedRouteApp extends ExpressRouter implements HttpNodeApp {
  readonly mountPath: string;
  private readonly log: Logger;
  private readonly fallthrough: Fallthrough;
  private warnedSlowPath = false;
  private readonly bodyRoutes: BodyRoute[] = [];
  private isApiPath: ((path: string) => boolean) | undefined;
  private unserved: UnservedHandler | undefined;
  /** Express's app settings (`app.set('json spaces', 2)`, `app.get('view engine')`); app-settings.ts reads the ones responses use. */
  private readonly appSettings: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  private responseOptions: ResponseOptions | undefined;
  private trust: TrustFn | undefined;
  /** Express's `app.locals`. */
  readonly locals: Record<string, unknown> = {};

  /**
   * @param expressNotFound - answer an unserved path with Express's `Cannot GET /x` page, except
   *   under `jsonRoot` (a distinct admin root, whose API answers JSON)
   */
  constructor(root: string, log: Logger, serverOptions: Record<string, unknown>, private readonly expressNotFound = false, private readonly jsonRoot?: string) {
    // Node-RED sets httpServerOptions on its node and admin apps before their first route.
    super(routingOptions(serverOptions));
    Object.assign(this.appSettings, serverOptions);
    this.responseOptions = responseOptions(this.appSettings);
    this.trust = trustProxy(this.appSettings['trust proxy']);
    this.mountPath = mountOf(root);
    this.log = log;
    this.fallthrough = (err, req, res) => this.respondUnhandled(err, req, res);
  }

  dispatch(rawReq: IncomingMessage, rawRes: ServerResponse, body: unknown, fallthrough: Fallthrough): void {
    if (!this.warnedSlowPath && !(rawReq instanceof ExpressRequest)) {
      this.warnedSlowPath = true;
      this.log.warn('http routes are served from a server not built with httpServerFactory; requests get the Express API the slow way');
    }
    const { req, res } = decorate(rawReq, rawRes, body);
    const options = this.responseOptions;
    res.appOptions = options;
    req.trustProxy = this.trust;
    if (options?.poweredBy) res.setHeader('X-Powered-By', 'Express');
    const mount = this.mountPath;
    const url = req.originalUrl;
    if (mount !== '' && this.covers(url)) {
      const rest = url.slice(mount.length);
      req.baseUrl = url.slice(0, mount.length);
      req.url = rest[0] === '/' ? rest : `/${rest}`;
    }
    this.handle(req, res, fallthrough);
  }

  covers(url: string): boolean {
    return under(this.mountPath, url);
  }

  private isApiRequest(url: string): boolean {
    if (this.jsonRoot !== undefined && under(this.jsonRoot, url)) return true;
    const q = url.indexOf('?');
    return this.isApiPath?.(q === -1 ? url : url.slice(0, q)) === true;
  }

  serve(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    this.dispatch(req, res, body, this.fallthrough);
  }

  setBodyMode(method: string, path: string, mode: BodyMode): () => void {
    const route: BodyRoute = { method: method.toUpperCase(), matcher: compilePath(path, true, this.routing).matcher, mode };
    this.bodyRoutes.push(route);
    return () => {
      const i = this.bodyRoutes.indexOf(route);
      if (i !== -1) this.bodyRoutes.splice(i, 1);
    };
  }

  bodyModeOf(method: string, url: string): BodyMode | undefined {
    const routes = this.bodyRoutes;
    if (routes.length === 0 || !this.covers(url)) return undefined;
    const q = url.indexOf('?');
    const path = url.slice(this.mountPath.length, q === -1 ? undefined : q) || '/';
    let mode: BodyMode | undefined;
    for (const route of routes) {
      if (route.method !== method || route.matcher.exec(path) === null) continue;
      // Node-RED reads raw bodies in middleware ahead of every route, so raw wins over upload.
      if (route.mode === 'raw') return 'raw';
      mode = route.mode;
    }
    return mode;
  }

  /** Express's `app.get(name)`: with a lone string it reads a setting, otherwise it adds a route. */
  override get(path: string, ...handlers: RouteHandler[]): any {
    if (handlers.length === 0) return this.appSettings[path];
    return super.get(path, ...handlers);
  }

  set(name: string, value?: unknown): unknown {
    if (arguments.length === 1) return this.appSettings[name];
    this.appSettings[name] = value;
    this.responseOptions = responseOptions(this.appSettings);
    this.trust = trustProxy(this.appSettings['trust proxy']);
    return this;
  }

  enabled(name: string): boolean {
    return Boolean(this.appSettings[name]);
  }

  disabled(name: string): boolean {
    return !this.appSettings[name];
  }

  enable(name: string): this {
    return this.set(name, true) as this;
  }

  disable(name: string): this {
    return this.set(name, false) as this;
  }

  setApiPaths(isApiPath: (path: string) => boolean): void {
    this.isApiPath = isApiPath;
  }

  setUnserved(handler: UnservedHandler): void {
    this.unserved = handler;
  }

  respondUnhandled(err: unknown, req: IncomingMessage, res: ServerResponse): void {
    const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
    if (err === undefined && this.unserved) {
      req.url = url;
      this.unserved(req, res, (e) => this.respondNotFound(e, req, res, url));
      return;
    }
    this.respondNotFound(err, req, res, url);
  }

  private respondNotFound(err: unknown, req: IncomingMessage, res: ServerResponse, url: string): void {
    if (err === undefined) {
      if (this.expressNotFound && !this.isApiRequest(url)) sendExpressNotFound(req, res, url);
      else sendJson(res, statusOf('not_found'), { code: 'not_found', message: `No route ${req.method} ${url}` });
      return;
    }
    const { status, code, message } = describeRouteError(err);
    if (status >= 500) this.log.error({ err, method: req.method, url }, 'unhandled error in http route');
    if (res.headersSent) {
      // Part of an answer is already on the wire; cutting the connection is the only honest signal.
      res.destroy();
      return;
    }
    sendJson(res, status, { code, message });
  }
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function mountOf(root: string): string {
  return root === '/' ? '' : root.replace(/\/+$/, '');
}

/** Whether `url` lies under the mount path `mount` ('' = everything), as Express matches a mount. */
function under(mount: string, url: string): boolean {
  if (mount === '') return true;
  if (url.length < mount.length || url.slice(0, mount.length).toLowerCase() !== mount.toLowerCase()) return false;
  const next = url[mount.length];
  return next === undefined || next === '/' || next === '?';
}

/** The router behind http-in nodes and RED.httpNode, mounted at httpNodeRoot. */
export function createHttpNodeApp(settings: Settings, log: Logger): HttpNodeApp {
  const adminMount = mountOf(settings.httpAdminRoot);
  const jsonRoot = adminMount !== '' && adminMount !== mountOf(settings.httpNodeRoot) ? adminMount : undefined;
  const app = new MountedRouteApp(settings.httpNodeRoot, log, settings.httpServerOptions, settings.httpNodeNotFound === 'express', jsonRoot);
  // Node-RED mounts a middleware form of httpNodeAuth ahead of every node route.
  const auth = settings.httpNodeAuth;
  if (typeof auth === 'function' || Array.isArray(auth)) app.use(auth);
  return app;
}

/** The router behind RED.httpAdmin, consulted by the admin scope when no admin route matched. */
export function createAdminRouteApp(settings: Settings, log: Logger): HttpNodeApp {
  return new MountedRouteApp(settings.httpAdminRoot, log, settings.httpServerOptions);
}

/**
 * Fastify's `serverFactory`: a node:http server whose requests and responses are born with the
 * Express API. Swapping prototypes per request instead invalidates V8's inline caches for the
 * whole request/stream prototype chain and costs most of the throughput (measured ~4x).
 */
export function httpServerFactory(handler: RequestListener, options: { checkEveryMs?: number; tls?: Record<string, unknown> } = {}): Server {
  // The subclasses are still IncomingMessage/ServerResponse, which is all Fastify's types need.
  // Header and request timeouts are only enforced when connections are checked (Node: every 30 s).
  const checks = options.checkEveryMs === undefined ? {} : { connectionsCheckingInterval: options.checkEveryMs };
  if (options.tls) return createHttpsServer({ ...options.tls, ...expressServerOptions, ...checks } as ServerOptions, handler) as unknown as Server;
  return createServer({ ...expressServerOptions, ...checks } as ServerOptions, handler);
}

/**
 * For a Fastify not-found handler: hands the request to `app`, answering a JSON 404 when no
 * route of `app` takes it. Headers already set on the reply (by onRequest hooks) are kept.
 */
export function dispatchOrNotFound(app: HttpNodeApp, request: FastifyRequest, reply: FastifyReply): void {
  const res = reply.raw;
  const headers = reply.getHeaders();
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined) res.setHeader(name, value);
  }
  reply.hijack();
  app.serve(request.raw, res, request.body ?? {});
}

export interface HttpNodePluginOptions {
  services: Services;
  /**
   * RED.httpAdmin. This plugin's wildcards catch every path under httpNodeRoot before the admin
   * scope's not-found handler could, so requests under httpAdminRoot try these routes first,
   * as Node-RED mounts its admin app before the node app.
   */
  adminRoutes?: HttpNodeApp;
  /** Keeps cross-site and rebinding requests away from the RED.httpAdmin routes (they go on to the node routes). */
  originCheck?: OriginCheck;
  /** On a root shared with the admin API: its routes, which http-in routes may not answer in another case. */
  adminPaths?: AdminPaths;
  /** The editor's page answers GET / on this root (both roots are the same): leave it that path. */
  editorAtRoot?: boolean;
  /** httpNodeAuth's user: checked before a request's body is read, OPTIONS excepted (preflights). */
  nodeAuth?: BasicAuthCheck;
  /** Holds requests no route took while the flows start or are redeployed (httpNodeRouteWait). */
  routeWait?: RouteWait;
  /** httpAdminMiddleware, for the RED.httpAdmin routes served here on a root shared with the admin API. */
  adminMiddleware?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/**
 * Serves httpNodeRoot: every method and path reaches services.httpNode with the body parsed the
 * way Node-RED's http-in does. Registered next to the admin scope; Fastify prefers the admin's
 * static and parametric routes over these wildcards, so admin routes win on a shared root.
 */
export const httpNodePlugin: FastifyPluginAsync<HttpNodePluginOptions> = async (scope, { services, adminRoutes, editorAtRoot, originCheck, adminPaths, nodeAuth, routeWait, adminMiddleware }) => {
  const app = services.httpNode;
  /** Whether RED.httpAdmin has a route or middleware that may take the request (it is tried first). */
  const adminMayHandle = (url: string, path: string, method: string) =>
    adminRoutes !== undefined && adminRoutes.covers(url) && adminRoutes.mayHandle(path.slice(adminRoutes.mountPath.length) || '/', method);
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: services.settings.apiMaxLength }, (_req, body, done) => {
    done(null, body);
  });
  scope.setErrorHandler(adminErrorHandler);
  /** Reads the body the way the request's route wants it, then routes the request. */
  const serve = (req: IncomingMessage, res: ServerResponse, raw: Buffer | undefined): void => {
    const contentType = req.headers['content-type'];
    const mode = app.bodyModeOf(req.method ?? 'GET', req.url ?? '/');
    if (mode === 'upload' && isMultipart(contentType)) {
      parseMultipart(req.headers, raw ?? Buffer.alloc(0)).then(({ fields, files }) => {
        (req as ExpressRequest).files = files;
        route(req, res, fields, raw);
      }, (e: unknown) => app.respondUnhandled(e, req, res));
      return;
    }
    let body: unknown;
    try {
      if (mode === 'raw') body = raw ?? Buffer.alloc(0);
      else if (mode === 'upload') body = uploadRouteBody(contentType, raw);
      else body = parseBody(contentType, raw);
    } catch (e) {
      app.respondUnhandled(e, req, res);
      return;
    }
    route(req, res, body, raw);
  };
  const route = (req: IncomingMessage, res: ServerResponse, body: unknown, raw: Buffer | undefined): void => {
    // No route took it: while the flows start or are redeployed it waits for them and is served
    // again from its raw body, since the new route may read bodies another way.
    const unmatched: Fallthrough = (err, q, s) => {
      if (err === undefined && routeWait?.hold(q, s, () => {
        q.url = (q as ExpressRequest).originalUrl;
        serve(q, s, raw);
      })) return;
      app.respondUnhandled(err, q, s);
    };
    const url = req.url ?? '/';
    if (adminRoutes && adminRoutes._router.stack.length > 0 && adminRoutes.covers(url) && !originCheck?.(req.method ?? 'GET', req.headers)) {
      // RED.httpAdmin answered nothing: the request continues to the node routes, as in Express.
      const toNodeRoutes: Fallthrough = (err, q, s) => {
        if (err !== undefined) return (adminRoutes as HttpNodeApp).respondUnhandled(err, q, s);
        const expressReq = q as ExpressRequest;
        q.url = expressReq.originalUrl;
        if (!nodeAuth || q.method === 'OPTIONS') return app.dispatch(q, s, expressReq.body, unmatched);
        Promise.resolve(nodeAuth(q)).then((ok) => {
          if (ok) app.dispatch(q, s, expressReq.body, unmatched);
          else sendBasicAuthChallenge(s);
        }, (e: unknown) => app.respondUnhandled(e, q, s));
      };
      adminRoutes.dispatch(req, res, body, toNodeRoutes);
    } else {
      app.dispatch(req, res, body, unmatched);
    }
  };
  if (adminMiddleware) {
    // Node-RED runs it for every request its admin app sees; here only for those an admin route may take.
    scope.addHook('onRequest', async (request, reply) => {
      const url = request.raw.url ?? '/';
      if (adminMayHandle(url, pathOf(url), request.method)) await adminMiddleware(request, reply);
    });
  }
  if (nodeAuth) {
    // Node-RED's httpNodeAuth: a client without the password is refused before its body is read.
    const refuse = (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      if (request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined) reply.raw.setHeader('Connection', 'close');
      sendBasicAuthChallenge(reply.raw);
    };
    // A callback hook: a client whose credentials were checked before is let through without a promise.
    scope.addHook('onRequest', (request, reply, done) => {
      const url = request.raw.url ?? '/';
      if (request.method === 'OPTIONS' || !app.covers(url)) return done();
      const ok = nodeAuth(request.raw);
      if (ok === true) return done();
      // RED.httpAdmin routes do not take httpNodeAuth; one that falls through is checked then.
      if (adminMayHandle(url, pathOf(url), request.method)) return done();
      if (ok === false) {
        refuse(request, reply);
        return done();
      }
      ok.then((passed) => {
        if (!passed) refuse(request, reply);
        done();
      }, done);
    });
  }
  // Hooks every http-in request passes take a callback: a promise each is a measurable share of a flow.
  // A body for a path no route or middleware can take is refused before it is read.
  scope.addHook('onRequest', (request, reply, done) => {
    const headers = request.headers;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return done();
    if (headers['content-length'] === '0') return done();
    // The route may be on its way back: the body is read and the request waits for it.
    if (routeWait?.active) return done();
    const url = request.raw.url ?? '/';
    if (!app.covers(url)) return done();
    const full = pathOf(url);
    if (app.mayHandle(full.slice(app.mountPath.length) || '/', request.method)) return done();
    if (adminMayHandle(url, full, request.method)) return done();
    reply.hijack();
    reply.raw.setHeader('Connection', 'close');
    app.respondUnhandled(undefined, request.raw, reply.raw);
    done();
  });
  if (adminPaths) {
    scope.addHook('onRequest', (request, _reply, done) => {
      if (!adminPaths.covers(request.method, request.url)) return done();
      done(new RunnelError('not_found', `${request.method} ${request.url.split('?')[0].slice(0, 200)} is an admin API path in another case; admin paths are case-sensitive`));
    });
  }
  const handler: RouteHandlerMethod = (request, reply) => {
    reply.hijack();
    serve(request.raw, reply.raw, request.body as Buffer | undefined);
  };
  if (editorAtRoot) scope.route({ method: scope.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD'), url: '/', handler });
  else scope.all('/', handler);
  scope.all('/*', handler);
};
