/**
 * The Express-style routing surface nodes see as RED.httpNode and RED.httpAdmin. The runtime only
 * knows this shape; the HTTP layer (src/server/) implements it, so the runtime never imports
 * server code.
 */
export type RouteHandler = (req: any, res: any, next: (err?: unknown) => void) => unknown;
/** Express error middleware: told apart from a RouteHandler by its four parameters. */
export type ErrorRouteHandler = (err: unknown, req: any, res: any, next: (err?: unknown) => void) => unknown;

export interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
  [key: string]: unknown;
}

export interface RouteApp {
  get(path: string, ...handlers: RouteHandler[]): RouteApp;
  post(path: string, ...handlers: RouteHandler[]): RouteApp;
  put(path: string, ...handlers: RouteHandler[]): RouteApp;
  delete(path: string, ...handlers: RouteHandler[]): RouteApp;
  patch(path: string, ...handlers: RouteHandler[]): RouteApp;
  head(path: string, ...handlers: RouteHandler[]): RouteApp;
  options(path: string, ...handlers: RouteHandler[]): RouteApp;
  all(path: string, ...handlers: RouteHandler[]): RouteApp;
  /** Middleware, optionally under a path prefix. */
  use(...args: (string | string[] | RouteHandler | ErrorRouteHandler)[]): RouteApp;
  /**
   * How requests to `method` + `path` have their body read before routing: `raw` (a Buffer,
   * http in's skipBodyParsing) or `upload` (multipart with files, http in's upload). Returns the
   * function that undoes it. RED.httpNode has it; RED.httpAdmin reads bodies one way only.
   */
  setBodyMode?(method: string, path: string, mode: 'raw' | 'upload'): () => void;
  /** Removes the routes registered for exactly this method (lower case, or 'all') and path. */
  removeRoute(method: string, path: string): void;
  /** Express's layer stack; Node-RED modules splice it to remove their routes. */
  _router: { stack: RouteLayer[] };
}
