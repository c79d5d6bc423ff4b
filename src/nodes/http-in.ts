import { takeResponseMark } from './lib/response-mark.js';
import { downstreamNodes } from './lib/downstream.js';
import type { ServerResponse } from 'node:http';
import type { Msg, NodeConfig, NodeInstance, RedApi, RouteHandler } from '../runtime/red-api/red-api-types.js';
import { statusOf } from '../base/errors.js';
import type Cors from 'cors';
import { lazy } from '../base/lazy.js';

/** Loaded only when httpNodeCors is set. */
const cors = lazy<typeof Cors>('cors');

const METHODS = new Set(['get', 'post', 'put', 'delete', 'patch']);
/**
 * How long a closing http-in node waits for the requests it already took to be answered. The
 * nodes after it close only then (sources close first), so the old flow finishes them.
 */
const OPEN_REQUEST_DRAIN_MS = 1000;
// Methods whose message carries the request body; GET carries the query instead.
const BODY_METHODS = new Set(['post', 'put', 'delete', 'patch', 'options']);

/** The response methods Node-RED's wrapper forwards (with a deprecation warning) besides `_res`. */
const WRAPPED = [
  'append', 'attachment', 'cookie', 'clearCookie', 'download', 'end', 'format', 'get', 'json', 'jsonp', 'links',
  'location', 'redirect', 'render', 'send', 'sendfile', 'sendFile', 'sendStatus', 'set', 'status', 'type', 'vary',
] as const;

/**
 * `msg.res`: Node-RED hands flows a wrapper whose `_res` is the Express response, so the live
 * response object is never walked by cloneMessage or debug. Its methods live on the prototype
 * so a request allocates one small object, not a closure per method.
 */
class ResponseWrapper {
  readonly _res: any;
  readonly #node: NodeInstance;

  constructor(node: NodeInstance, res: unknown) {
    this._res = res;
    this.#node = node;
  }

  static {
    for (const name of WRAPPED) {
      Object.defineProperty(ResponseWrapper.prototype, name, {
        value(this: ResponseWrapper, ...args: unknown[]) {
          this.#node.warn(`Deprecated call to msg.res.${name}`);
          const res = this._res;
          if (typeof res[name] !== 'function') throw new TypeError(`msg.res.${name} is not supported`);
          const result = res[name](...args);
          return result === res ? this : result;
        },
        writable: true,
        configurable: true,
      });
    }
  }
}

export default function (RED: RedApi) {
  // Node-RED's httpNodeCors: preflights for every path, and the headers on each http-in route.
  const corsOptions = (RED.settings as { httpNodeCors?: Record<string, unknown> }).httpNodeCors;
  const corsHandler = corsOptions ? (cors()(corsOptions) as RouteHandler) : undefined;
  if (corsHandler) RED.httpNode.options('*', corsHandler);

  class HttpInNode extends RED.nodes.Node {
    url: string | undefined;
    method: string;
    upload: boolean;
    skipBodyParsing: boolean;
    /** Requests this node received that nobody has answered yet. */
    readonly open = new Set<ServerResponse>();
    /** While closing: called when the last open request has been answered. */
    private drained: (() => void) | undefined;

    /**
     * Closing waits for the requests in flight, as the nodes after this one keep running until it
     * has closed. A flow that does not answer them in time would drop them with its nodes (Node-RED
     * then leaves the client hanging): they get a 503.
     */
    private answerOpenRequests(done: () => void): void {
      if (this.open.size === 0) return done();
      const timer = setTimeout(() => {
        this.drained = undefined;
        for (const res of this.open) answerRestarted(res);
        this.open.clear();
        done();
      }, OPEN_REQUEST_DRAIN_MS);
      this.drained = () => {
        this.drained = undefined;
        clearTimeout(timer);
        done();
      };
    }

    /**
     * A deploy that leaves this node running may still replace nodes after it: a message inside
     * one of them is dropped with it (a function node's timers are cleared, queued messages are
     * not delivered), and the request it carries would never be answered. The requests open when
     * such a deploy starts get the same bounded wait as when this node itself closes, then a 503.
     */
    private watchDeploys(): void {
      const events = RED.events;
      const timers = new Set<NodeJS.Timeout>();
      let atRisk: { reach: NodeInstance[]; requests: ServerResponse[] } | undefined;
      const stopping = () => {
        atRisk = this.open.size > 0 ? { reach: downstreamNodes(RED, this), requests: [...this.open] } : undefined;
      };
      const stopped = () => {
        const risk = atRisk;
        atRisk = undefined;
        if (!risk || !risk.reach.some((node) => node._closed)) return;
        const timer = setTimeout(() => {
          timers.delete(timer);
          for (const res of risk.requests) if (this.open.has(res)) answerRestarted(res);
        }, OPEN_REQUEST_DRAIN_MS);
        timers.add(timer);
      };
      events.on('flows:stopping', stopping);
      events.on('flows:stopped', stopped);
      this.on('close', () => {
        events.off('flows:stopping', stopping);
        events.off('flows:stopped', stopped);
        for (const timer of timers) clearTimeout(timer);
      });
    }

    constructor(config: NodeConfig) {
      super(config);
      this.method = String(config.method ?? 'get').toLowerCase();
      this.upload = config.upload === true;
      this.skipBodyParsing = config.skipBodyParsing === true;
      if ((RED.settings as { httpNodeRoot?: unknown }).httpNodeRoot === false) {
        this.warn('Cannot create http-in node when httpNodeRoot set to false');
        return;
      }
      if (!config.url || typeof config.url !== 'string') {
        this.warn('missing path');
        return;
      }
      if (!METHODS.has(this.method)) {
        this.warn(`unsupported method: ${String(config.method)}`);
        return;
      }
      const url = config.url.startsWith('/') ? config.url : `/${config.url}`;
      this.url = url;
      const method = this.method;
      const withBody = BODY_METHODS.has(method);
      const open = this.open;
      const node = this;
      // One listener per node, called with the response as `this`: no closure per request.
      const forget = function (this: ServerResponse) {
        open.delete(this);
        if (open.size === 0) node.drained?.();
      };
      const callback: RouteHandler = (req, res) => {
        open.add(res);
        res.on('close', forget);
        const msg: Msg = { _msgid: RED.util.generateId(), req, res: new ResponseWrapper(this, res), payload: withBody ? req.body : req.query };
        this.send(msg);
      };
      const onError = ((err: unknown, _req: unknown, res: { sendStatus(code: number): void; headersSent?: boolean }) => {
        this.warn(err);
        if (!res.headersSent) res.sendStatus(500);
      }) as unknown as RouteHandler;
      const app = RED.httpNode;
      const middleware = (RED.settings as { httpNodeMiddleware?: unknown }).httpNodeMiddleware;
      // Node-RED takes one middleware function or an array of them.
      const before = typeof middleware === 'function' ? [middleware as RouteHandler] : Array.isArray(middleware) ? (middleware as RouteHandler[]) : [];
      const handlers = corsHandler ? [...before, corsHandler, callback, onError] : [...before, callback, onError];
      app[method as 'get'](url, ...handlers);
      // Node-RED parses uploads on POST routes only; a raw body wins over them.
      const bodyMode = this.skipBodyParsing ? 'raw' : this.upload && method === 'post' ? 'upload' : undefined;
      const releaseBodyMode = bodyMode && app.setBodyMode?.(method, url, bodyMode);
      this.on('close', (done: () => void) => {
        app.removeRoute(method, url);
        if (releaseBodyMode) releaseBodyMode();
        this.answerOpenRequests(done);
      });
      this.watchDeploys();
    }
  }

  class HttpResponseNode extends RED.nodes.Node {
    constructor(config: NodeConfig) {
      super(config);
      const configured = config.headers && typeof config.headers === 'object' ? (config.headers as Record<string, unknown>) : {};
      const headers = Object.keys(configured).length > 0 ? configured : undefined;
      const statusCode = parseInt(String(config.statusCode), 10) || undefined;
      // Node-RED's handler takes no done callback; keeping that arity spares a closure per response.
      this.on('input', (msg: Msg) => {
        const res = msg.res?._res;
        if (!res) {
          this.warn('No response object');
          return;
        }
        const merged = mergeHeaders(headers, msg.headers);
        if (merged) res.set(merged);
        if (msg.cookies) applyCookies(res, msg.cookies);
        res.status(statusCode ?? (parseInt(msg.statusCode, 10) || 200));
        const payload = msg.payload;
        if (typeof payload === 'object' && !Buffer.isBuffer(payload)) res.jsonp(payload);
        else if (typeof payload === 'number') res.send(String(payload));
        else res.send(payload);
      });
    }
  }

  RED.nodes.registerType('http in', HttpInNode);
  RED.nodes.registerType('http response', HttpResponseNode);
}

function answerRestarted(res: ServerResponse): void {
  if (res.headersSent) return;
  res.statusCode = statusOf('flow_restarted');
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Retry-After', '1');
  res.end(JSON.stringify({ code: 'flow_restarted', message: 'The flow handling this request was redeployed; retry' }));
}

/**
 * The node's headers win over msg.headers. Headers that came unchanged from an http request node
 * describe that earlier response, so they are not echoed (Node-RED's fingerprint check).
 */
function mergeHeaders(configured: Record<string, unknown> | undefined, fromMsg: unknown): Record<string, any> | undefined {
  if (!fromMsg || typeof fromMsg !== 'object') return configured;
  const msgHeaders = fromMsg as Record<string, unknown>;
  if (takeResponseMark(msgHeaders)) return configured;
  const merged: Record<string, unknown> = { ...configured };
  for (const name of Object.keys(msgHeaders)) {
    if (!Object.hasOwn(merged, name)) merged[name] = msgHeaders[name];
  }
  return merged;
}

/** msg.cookies: a value or `{value, ...options}` sets a cookie; null or `{value: null}` clears it. */
function applyCookies(res: any, cookies: Record<string, any>): void {
  for (const name of Object.keys(cookies)) {
    const cookie = cookies[name];
    if (cookie === null || (typeof cookie === 'object' && cookie.value === null)) {
      if (cookie === null) res.clearCookie(name);
      else res.clearCookie(name, withoutValue(cookie));
    } else if (typeof cookie === 'object') {
      res.cookie(name, cookie.value, withoutValue(cookie));
    } else {
      res.cookie(name, cookie);
    }
  }
}

function withoutValue(cookie: Record<string, unknown>): Record<string, unknown> {
  const { value: _value, ...options } = cookie;
  return options;
}
