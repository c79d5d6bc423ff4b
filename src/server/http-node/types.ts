import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RouteApp } from '../../runtime/red-api/http-types.js';
import type { OriginCheck } from '../request-origin.js';
import type { AdminPaths } from '../admin-paths.js';
import type { BasicAuthCheck } from '../http-security/basic-auth.js';
import type { Fallthrough } from './router.js';
import type { BodyMode } from './body.js';
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

/** What the entry's steps share: the routers a request may reach and the guards on its way. */
export interface EntryContext {
  /** RED.httpNode, with the flows' http-in routes. */
  app: HttpNodeApp;
  /**
   * RED.httpAdmin. The entry's wildcards catch every path under httpNodeRoot before the admin
   * scope's not-found handler could, so requests under httpAdminRoot try these routes first,
   * as Node-RED mounts its admin app before the node app.
   */
  adminRoutes?: HttpNodeApp;
  /** Keeps cross-site and rebinding requests away from the RED.httpAdmin routes (they go on to the node routes). */
  originCheck?: OriginCheck;
  /** Where httpNodeRoot holds the admin API: its paths, which never reach an http-in route. */
  adminPaths?: AdminPaths;
  /** httpNodeAuth's user: checked before a request's body is read, OPTIONS excepted (preflights). */
  nodeAuth?: BasicAuthCheck;
  /** Holds requests no route took while the flows start or are redeployed (httpNodeRouteWait). */
  routeWait?: RouteWait;
}
