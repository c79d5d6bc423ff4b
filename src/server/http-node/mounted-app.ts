import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Settings } from '../../settings/settings.js';
import type { Logger } from '../../base/log.js';
import type { RouteHandler } from '../../runtime/red-api/http-types.js';
import { isRunnelError, statusOf } from '../../base/errors.js';
import { describeRouteError } from '../errors.js';
import { ExpressRouter, type Fallthrough } from './router.js';
import { decorate, ExpressRequest } from './compat.js';
import type { BodyMode } from './body.js';
import { compilePath } from './path-pattern.js';
import type { LinearRegExp } from './linear-regexp.js';
import { sendExpressError, sendExpressNotFound, sendJson } from './not-found.js';
import { responseOptions, routingOptions, trustProxy, type ResponseOptions, type TrustFn } from './app-settings.js';
import type { HttpNodeApp, UnservedHandler } from './types.js';

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
   * @param expressErrors - answer an error a route handler raised with Express's error page (on the
   *   same paths as expressNotFound, or everywhere for RED.httpAdmin); Runnel's own errors stay JSON
   */
  constructor(
    root: string,
    log: Logger,
    serverOptions: Record<string, unknown>,
    private readonly expressNotFound = false,
    private readonly jsonRoot?: string,
    private readonly expressErrors = expressNotFound,
  ) {
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
    const page = this.expressErrors && !isRunnelError(err) && (this.expressNotFound ? !this.isApiRequest(url) : true);
    if (status >= 500) this.log.error({ err, method: req.method, url }, 'unhandled error in http route');
    if (res.headersSent) {
      // Part of an answer is already on the wire; cutting the connection is the only honest signal.
      res.destroy();
      return;
    }
    if (page) sendExpressError(req, res, err);
    else sendJson(res, status, { code, message });
  }
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
  return new MountedRouteApp(settings.httpAdminRoot, log, settings.httpServerOptions, false, undefined, true);
}
