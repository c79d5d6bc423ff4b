import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteApp, RouteHandler, RouteLayer } from '../../runtime/red-api/http-types.js';
import { compilePath, decodeParam, type PathSpec, type RoutingOptions } from './path-pattern.js';
import type { LinearRegExp } from './linear-regexp.js';

export type NextFunction = (err?: unknown) => void;
/** Called when a request falls off the end of the stack: with the error nobody handled, or undefined. */
export type Fallthrough = (err: unknown, req: IncomingMessage, res: ServerResponse) => void;
// Express handlers take (req, res, next) or (err, req, res, next); arity tells them apart.
type AnyHandler = (...args: any[]) => unknown;
type Params = Record<string | number, string | undefined>;

/** A request as the router sees it: the fields Express middleware reads and writes. */
interface RoutedRequest extends IncomingMessage {
  params: Params;
  baseUrl: string;
  route?: Route;
}

/** One entry of `_router.stack`, or of a route's own stack. Field names are Express's. */
class Layer implements RouteLayer {
  [key: string]: unknown;
  readonly path: PathSpec;
  readonly regexp: RegExp;
  readonly matcher: LinearRegExp;
  readonly keys: (string | number)[];
  readonly matchesAll: boolean;
  readonly matchesAny: boolean;
  readonly handle: AnyHandler;
  readonly name: string;
  readonly route?: Route;
  /** Set on a route's own layers: the lower-case method it serves, or undefined for `all`. */
  readonly method?: string;

  constructor(path: PathSpec, end: boolean, handle: AnyHandler, extra: { route?: Route; method?: string; routing?: RoutingOptions } = {}) {
    const pattern = compilePath(path, end, extra.routing);
    this.path = path;
    this.regexp = pattern.regexp;
    this.matcher = pattern.matcher;
    this.keys = pattern.keys;
    this.matchesAll = pattern.matchesAll;
    this.matchesAny = pattern.matchesAny;
    this.handle = handle;
    this.name = handle.name || '<anonymous>';
    this.route = extra.route;
    this.method = extra.method;
  }

  /** Express's Layer.match: a later group of the same name does not erase an earlier value. */
  params(match: RegExpExecArray): Params {
    const params: Params = {};
    if (this.matchesAny) {
      params[0] = decodeParam(match.input);
      return params;
    }
    for (let i = 1; i < match.length; i++) {
      const name = this.keys[i - 1];
      const value = decodeParam(match[i]);
      if (value !== undefined || !Object.hasOwn(params, name)) params[name] = value;
    }
    return params;
  }
}

/** Express's Route: what `app.get(path, ...)` creates, and what Node-RED modules search the stack for. */
class Route {
  readonly path: string;
  readonly stack: Layer[] = [];
  readonly methods: Record<string, boolean> = {};

  constructor(path: string) {
    this.path = path;
  }

  handlesMethod(method: string): boolean {
    const m = this.methods;
    return m._all === true || m[method] === true || (method === 'head' && m.get === true);
  }

  /** The method name to run handlers for: HEAD falls back to GET routes, as in Express. */
  dispatchMethod(method: string): string {
    return method === 'head' && !this.methods.head ? 'get' : method;
  }

  /** Methods for an automatic OPTIONS answer. */
  allowed(): string[] {
    if (this.methods._all) return [];
    const list = Object.keys(this.methods).map((m) => m.toUpperCase());
    if (this.methods.get && !this.methods.head) list.push('HEAD');
    return list;
  }
}

const METHOD_NAMES: Record<string, string> = {
  GET: 'get', POST: 'post', PUT: 'put', DELETE: 'delete', PATCH: 'patch', HEAD: 'head', OPTIONS: 'options',
};

/**
 * An Express 4-style router. `_router.stack` is the array consulted on every request, so modules
 * that splice it (Node-RED's http-in node does) remove routes exactly as they would in Express.
 */
export class ExpressRouter implements RouteApp {
  readonly _router: { stack: Layer[] } = { stack: [] };

  constructor(protected readonly routing: RoutingOptions = {}) {}

  get(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute('get', path, handlers);
  }
  post(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute('post', path, handlers);
  }
  put(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute('put', path, handlers);
  }
  delete(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute('delete', path, handlers);
  }
  patch(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute('patch', path, handlers);
  }
  head(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute('head', path, handlers);
  }
  options(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute('options', path, handlers);
  }
  all(path: string, ...handlers: RouteHandler[]): this {
    return this.addRoute(undefined, path, handlers);
  }

  use(...args: unknown[]): this {
    let paths: unknown = '/';
    if (typeof args[0] === 'string' || args[0] instanceof RegExp || Array.isArray(args[0]) && typeof args[0][0] !== 'function') paths = args.shift();
    const handlers = flatten(args, 'use');
    for (const path of Array.isArray(paths) ? paths : [paths]) {
      // As in Express, a `use` prefix follows case sensitivity but never strict routing.
      const routing = { caseSensitive: this.routing.caseSensitive };
      for (const fn of handlers) this._router.stack.push(new Layer(path instanceof RegExp ? path : String(path), false, fn, { routing }));
    }
    return this;
  }

  /**
   * Whether any layer could take a request for `path` (a `use('/')` middleware takes every path);
   * with `method`, routes for other methods do not count.
   */
  mayHandle(path: string, method?: string): boolean {
    const name = method === undefined ? undefined : (METHOD_NAMES[method] ?? method.toLowerCase());
    for (const layer of this._router.stack) {
      if (name !== undefined && layer.route && !layer.route.handlesMethod(name)) continue;
      if (layer.matchesAll || layer.matchesAny || layer.matcher.exec(path) !== null) return true;
    }
    return false;
  }

  removeRoute(method: string, path: string): void {
    const key = method.toLowerCase() === 'all' ? '_all' : method.toLowerCase();
    const stack = this._router.stack;
    for (let i = stack.length - 1; i >= 0; i--) {
      const route = stack[i].route;
      if (route && route.path === path && route.methods[key]) stack.splice(i, 1);
    }
  }

  /**
   * Runs the request through the stack. `done` is called once, only if no handler ended the
   * request: with the error nobody handled, or with undefined when no route matched.
   */
  handle(req: IncomingMessage, res: ServerResponse, done: Fallthrough): void {
    new Cycle(this._router.stack, req as RoutedRequest, res, done).next();
  }

  private addRoute(method: string | undefined, path: string, handlers: unknown[]): this {
    const fns = flatten(handlers, method ?? 'all');
    const route = new Route(path);
    route.methods[method ?? '_all'] = true;
    for (const fn of fns) route.stack.push(new Layer('/', true, fn, { method }));
    this._router.stack.push(new Layer(path, true, dispatchRoute, { route, routing: this.routing }));
    return this;
  }
}

/** The match of Express's fast_star route `*`: the whole path, whatever it is. */
function ANY_MATCH(path: string): RegExpExecArray {
  return /^[\s\S]*$/.exec(path) as RegExpExecArray;
}

/** Stand-in `handle` of a route's layer in the main stack; the Cycle runs the route's own stack. */
function dispatchRoute(): void {}

function flatten(list: unknown[], method: string): AnyHandler[] {
  const out: AnyHandler[] = [];
  for (const item of list.flat(Infinity)) {
    if (typeof item !== 'function') throw new TypeError(`Route.${method}() requires a callback function but got a ${typeof item}`);
    out.push(item as AnyHandler);
  }
  if (out.length === 0) throw new TypeError(`Route.${method}() requires a callback function`);
  return out;
}

/**
 * One request's walk through the stack. A single `next` serves both the main stack and the
 * current route's handlers, so a request allocates one closure however many layers it visits.
 */
class Cycle {
  readonly next: NextFunction;
  private index = 0;
  private route: Route | undefined;
  private routeIndex = 0;
  private routeMethod = '';
  private readonly method: string;
  /** The prefix a `use` layer trimmed off req.url, restored before the next layer runs. */
  private trimmed = '';
  private parentBase = '';
  private slashAdded = false;
  private allow: string[] | undefined;
  private finished = false;

  constructor(
    private readonly stack: Layer[],
    private readonly req: RoutedRequest,
    private readonly res: ServerResponse,
    private readonly done: Fallthrough,
  ) {
    const m = req.method ?? 'GET';
    this.method = METHOD_NAMES[m] ?? m.toLowerCase();
    this.next = (err?: unknown) => {
      if (this.route) this.stepRoute(err);
      else this.stepStack(err);
    };
    // Express's req.next: res.sendFile and res.render hand their failures to it.
    (req as { next?: NextFunction }).next = this.next;
  }

  private stepRoute(err: unknown): void {
    const route = this.route as Route;
    if (err === 'route' || err === 'router') {
      this.route = undefined;
      if (err === 'router') this.finish(undefined);
      else this.stepStack(undefined);
      return;
    }
    const error = err || undefined;
    const stack = route.stack;
    while (this.routeIndex < stack.length) {
      const layer = stack[this.routeIndex++];
      if (layer.method !== undefined && layer.method !== this.routeMethod) continue;
      if (error === undefined ? layer.handle.length > 3 : layer.handle.length !== 4) continue;
      this.invoke(layer.handle, error);
      return;
    }
    this.route = undefined;
    this.stepStack(error);
  }

  private stepStack(err: unknown): void {
    if (err === 'router') return this.finish(undefined);
    let error: unknown = err === 'route' ? undefined : err || undefined;
    this.restoreUrl();
    const req = this.req;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const stack = this.stack;
    while (this.index < stack.length) {
      const layer = stack[this.index++];
      const route = layer.route;
      // Layers that would be skipped whatever the path are skipped before matching it: a GET
      // otherwise runs every POST route's expression (RED.httpAdmin's are tried before each http-in route).
      if (route) {
        if (error !== undefined) continue;
        if (this.method !== 'options' && !route.handlesMethod(this.method)) continue;
      } else if (error === undefined ? layer.handle.length > 3 : layer.handle.length !== 4) {
        continue;
      }
      const match = layer.matchesAny ? ANY_MATCH(path) : layer.matcher.exec(path);
      if (match === null) continue;
      if (route && !route.handlesMethod(this.method)) {
        (this.allow ??= []).push(...route.allowed());
        continue;
      }
      try {
        req.params = layer.keys.length === 0 ? {} : layer.params(match);
      } catch (e) {
        error = e;
        continue;
      }
      if (route) {
        req.route = route;
        this.route = route;
        this.routeIndex = 0;
        this.routeMethod = route.dispatchMethod(this.method);
        this.stepRoute(undefined);
        return;
      }
      if (!layer.matchesAll) this.trim(match[0]);
      this.invoke(layer.handle, error);
      return;
    }
    this.finish(error);
  }

  private invoke(fn: AnyHandler, error: unknown): void {
    const next = this.next;
    try {
      const result = error === undefined ? fn(this.req, this.res, next) : fn(error, this.req, this.res, next);
      if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
        (result as PromiseLike<unknown>).then(undefined, (e: unknown) => next(e || new Error('Route handler rejected')));
      }
    } catch (e) {
      next(e || new Error('Route handler threw'));
    }
  }

  /** Express mounts `use('/prefix', fn)` middleware by hiding the prefix from req.url. */
  private trim(matched: string): void {
    const req = this.req;
    this.trimmed = matched;
    this.parentBase = req.baseUrl ?? '';
    req.baseUrl = this.parentBase + (matched.endsWith('/') ? matched.slice(0, -1) : matched);
    let url = (req.url ?? '/').slice(matched.length);
    this.slashAdded = url[0] !== '/';
    if (this.slashAdded) url = `/${url}`;
    req.url = url;
  }

  private restoreUrl(): void {
    if (this.trimmed === '') return;
    const req = this.req;
    const url = req.url ?? '/';
    req.url = this.trimmed + (this.slashAdded ? url.slice(1) : url);
    req.baseUrl = this.parentBase;
    this.trimmed = '';
    this.slashAdded = false;
  }

  private finish(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.restoreUrl();
    if (error === undefined && this.allow && !this.res.headersSent) {
      const allow = [...new Set(this.allow)].join(',');
      this.res.statusCode = 200;
      this.res.setHeader('Allow', allow);
      this.res.setHeader('Content-Type', 'text/html; charset=utf-8');
      this.res.end(allow);
      return;
    }
    this.done(error, this.req, this.res);
  }
}
