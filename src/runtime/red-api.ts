import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Runtime } from './runtime.js';
import type { NodeSetInfo, NodeConstructor, CredentialDefinition } from '../registry/registry.js';
import { initNode, type Node, type NodeConfig } from './node.js';
import { util } from './util/index.js';
import { checkBearer } from '../auth/guard.js';
import { settingsView } from './settings-view.js';
import { createTranslator, type Catalogs } from './i18n.js';
import type { RouteHandler } from './http-types.js';

/** The Node-RED version Runnel presents to modules (`"node-red": {"version": ">=3"}` checks). */
export const NODE_RED_COMPAT_VERSION = '4.1.15';

export interface RedApiOptions {
  /** The module's directory, for RED.require and locales. */
  moduleDir?: string;
  /** i18n catalogs by language for this set's namespace. */
  catalogs?: Catalogs;
}

/**
 * Builds the RED object handed to one node set's `module.exports = function (RED) {…}`. Each set
 * gets its own object (its registerType attributes types to the set, RED._ uses its catalogs).
 */
export function createRedApi(runtime: Runtime, set: NodeSetInfo, options: RedApiOptions = {}) {
  const { engine, registry } = runtime;
  const log = runtime.log;
  const plugins = new Map<string, Record<string, unknown>>();
  const moduleRequire = createRequire(path.join(options.moduleDir ?? runtime.settings.userDir, 'package.json'));
  const userRequire = createRequire(path.join(runtime.settings.userDir, 'package.json'));

  const logAt = (level: 'info' | 'warn' | 'error' | 'debug' | 'trace' | 'audit') => (msg: unknown) => {
    if (msg !== null && typeof msg === 'object' && !(msg instanceof Error)) log[level]({ module: set.module, ...(msg as object) }, String((msg as { msg?: unknown }).msg ?? ''));
    else log[level]({ module: set.module }, msg instanceof Error ? msg.message : String(msg));
  };

  return {
    nodes: {
      createNode(node: Node, config: NodeConfig) {
        initNode(node, config);
      },
      registerType(type: string, ctor: NodeConstructor, opts?: { credentials?: CredentialDefinition; settings?: Record<string, unknown> }) {
        registry.registerType(set, type, ctor, opts ?? {});
      },
      getNode(id: string) {
        return engine.nodes.get(id) ?? null;
      },
      eachNode(cb: (config: unknown) => void) {
        for (const n of runtime.getFlows().flows) cb(n);
      },
      getCredentials(id: string) {
        return runtime.credentials.get(id);
      },
      addCredentials(id: string, creds: Record<string, unknown>) {
        runtime.updateNodeCredentials(id, creds);
      },
      deleteCredentials(id: string) {
        runtime.updateNodeCredentials(id, undefined);
      },
    },
    util,
    settings: settingsView(runtime.settings, NODE_RED_COMPAT_VERSION),
    log: {
      info: logAt('info'),
      warn: logAt('warn'),
      error: logAt('error'),
      debug: logAt('debug'),
      trace: logAt('trace'),
      audit: logAt('audit'),
      metric: () => false,
      log: (entry: unknown) => {
        const e = entry as { level?: unknown; msg?: unknown } | string;
        if (typeof e === 'string' || e === null || typeof e !== 'object') return logAt('info')(e);
        const level = typeof e.level === 'string' && ['error', 'warn', 'info', 'debug', 'trace', 'audit'].includes(e.level) ? e.level : 'info';
        logAt(level as 'info')(e.msg);
      },
      FATAL: 10, ERROR: 20, WARN: 30, INFO: 40, DEBUG: 50, TRACE: 60, AUDIT: 98, METRIC: 99,
    },
    events: runtime.events,
    comms: {
      publish(topic: string, data: unknown, retain?: boolean) {
        runtime.events.emit('comms', { topic, data, retain: retain === true });
      },
    },
    library: {
      register(type: string) {
        log.debug({ module: set.module, type }, 'library type registered');
      },
    },
    plugins: {
      registerPlugin(id: string, definition: Record<string, unknown>) {
        plugins.set(id, { ...definition, id, module: set.module });
      },
      get: (id: string) => plugins.get(id),
      getByType: (type: string) => [...plugins.values()].filter((p) => p.type === type),
    },
    version: () => NODE_RED_COMPAT_VERSION,
    require: (name: string) => {
      try {
        return moduleRequire(name);
      } catch {
        return userRequire(name);
      }
    },
    import: (name: string) => import(name.startsWith('.') || path.isAbsolute(name) ? pathToFileURL(path.resolve(options.moduleDir ?? '.', name)).href : name),
    get httpNode() {
      return runtime.httpNode;
    },
    get httpAdmin() {
      return runtime.httpAdmin;
    },
    get server() {
      return runtime.server;
    },
    auth: {
      needsPermission(permission: string): RouteHandler {
        return (req, res, next) => {
          void checkBearer(runtime.auth, req.headers?.authorization, permission).then(
            (result) => {
              if (result.ok) {
                req.user = result.principal ?? undefined;
                next();
              } else {
                if (result.wwwAuthenticate) res.setHeader('WWW-Authenticate', result.wwwAuthenticate);
                res.statusCode = 401;
                res.setHeader('Content-Type', 'application/json');
                res.end(JSON.stringify({ code: result.code, message: result.message }));
              }
            },
            (err) => next(err),
          );
        };
      },
    },
    _: createTranslator(`${set.module}/${set.name}`, options.catalogs),
  };
}

export type RedApi = ReturnType<typeof createRedApi>;
