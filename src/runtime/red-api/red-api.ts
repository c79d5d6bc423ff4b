import { types } from 'node:util';
import { createRequire, isBuiltin } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { Settings } from '../../settings/settings.js';
import type { Logger } from '../../base/log.js';
import type { AuthService } from '../../auth/types.js';
import type { FlowNodeConfig } from '../../storage/contract.js';
import type { NodeSetInfo, NodeConstructor, Registry } from '../../registry/registry.js';
import { NODE_RED_COMPAT_VERSION } from '../../base/version.js';
import { Node, initNode, type NodeConfig } from '../flows/node.js';
import type { RuntimeServices } from '../flows/services.js';
import type { ClusterChannel, RedApi, RegisterTypeOptions } from './red-api-types.js';
import { util } from '../util/index.js';
import { checkBearer } from '../../auth/guard.js';
import { settingsViewFor } from './settings-view.js';
import { catalogsFor, createTranslator, type Catalogs } from './i18n.js';
import type { RouteApp, RouteHandler } from './http-types.js';
import { resolveImport } from '../../registry/resolve-import.js';
import { externalModulesDir, isPlainImportPath, notAllowedError, splitSpec } from '../../registry/external-modules.js';
import { ModuleRules } from '../../registry/module-rules.js';

export interface RedApiOptions {
  /** The module's directory, for RED.require and RED.import. */
  moduleDir?: string;
  /** i18n catalogs by language from the set's `locales/` folder; their presence makes the set its own namespace. */
  catalogs?: Catalogs;
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'audit';
/** Node-RED's numeric levels, as passed to `RED.log.log({level, msg})`. */
const LEVELS = { FATAL: 10, ERROR: 20, WARN: 30, INFO: 40, DEBUG: 50, TRACE: 60, AUDIT: 98, METRIC: 99 } as const;
const LEVEL_NAMES: Record<number, Level> = { 10: 'fatal', 20: 'error', 30: 'warn', 40: 'info', 50: 'debug', 60: 'trace', 98: 'audit' };

/** What the RED object is built from: the runtime, seen through the members it uses. */
export interface RedApiHost {
  readonly settings: Settings;
  readonly log: Logger;
  readonly registry: Registry;
  readonly services: RuntimeServices;
  readonly events: EventEmitter;
  readonly auth: AuthService;
  readonly httpNode: RouteApp;
  readonly httpAdmin: RouteApp | undefined;
  readonly server: Server | undefined;
  /** RED.cluster, the same object for every set. */
  readonly cluster: ClusterChannel | undefined;
  readonly credentials: { get(id: string): Record<string, unknown> | undefined };
  getFlows(): { flows: FlowNodeConfig[] };
  /** RED.nodes.addCredentials / deleteCredentials: change one node's credentials and persist soon. */
  updateNodeCredentials(id: string, value: Record<string, unknown> | undefined): void;
}

/**
 * Builds the RED object handed to one node set's `module.exports = function (RED) {…}`. Each set
 * gets its own object (its registerType attributes types to the set, RED._ uses its namespace);
 * settings, hooks, plugins and message catalogs are shared by the whole runtime.
 */
export function createRedApi(runtime: RedApiHost, set: NodeSetInfo, options: RedApiOptions = {}): RedApi {
  const { services, registry } = runtime;
  const log = runtime.log;
  const settings = settingsViewFor(runtime.settings, NODE_RED_COMPAT_VERSION);
  const lang = runtime.settings.extra?.lang;
  const catalogs = catalogsFor(runtime.settings, typeof lang === 'string' ? lang : undefined);
  // Node-RED: a set with a locales/ folder is its own namespace; otherwise it shares the module's.
  const hasLocales = options.catalogs !== undefined && Object.keys(options.catalogs).length > 0;
  const namespace = hasLocales ? `${set.module}/${set.name}` : set.module;
  if (hasLocales) catalogs.register(namespace, options.catalogs!);
  const requireFromModule = options.moduleDir ? createRequire(path.join(options.moduleDir, 'package.json')) : undefined;
  const requireFromUserDir = createRequire(path.join(path.resolve(runtime.settings.userDir), 'package.json'));
  const { allowList, denyList } = runtime.settings.externalModules.modules;
  const modulePolicy = new ModuleRules(allowList, denyList);

  const logAt = (level: Level) => (msg: unknown) => {
    if (msg !== null && typeof msg === 'object' && !types.isNativeError(msg)) {
      // The object's `msg` becomes the log line's message; the rest are its fields.
      const { msg: text, ...fields } = msg as { msg?: unknown };
      log[level]({ module: set.module, ...fields }, text === undefined ? '' : String(text));
    } else log[level]({ module: set.module }, types.isNativeError(msg) ? msg.message : String(msg));
  };
  const levelOf = (level: unknown): Level | undefined =>
    typeof level === 'number' ? LEVEL_NAMES[level] : typeof level === 'string' && Object.values(LEVEL_NAMES).includes(level as Level) ? (level as Level) : undefined;

  return {
    nodes: {
      Node,
      createNode(node: object, config) {
        initNode(node as Node, config as NodeConfig);
      },
      registerType(type: string, ctor: NodeConstructor, opts?: RegisterTypeOptions) {
        registry.registerType(set, type, ctor, opts ?? {});
        if (opts?.settings) {
          try {
            settings.registerNodeSettings(type, opts.settings);
          } catch (err) {
            // Node-RED's behaviour: the type stays registered, the settings are refused with a warning.
            log.warn({ module: set.module, type }, `[${type}] ${(err as Error).message}`);
          }
        }
      },
      registerSubflow(definition: unknown) {
        registry.registerSubflow(set, definition);
      },
      getNode(id: string) {
        return services.nodes.get(id) ?? null;
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
      linkcallTargets: services.linkcallTargets,
    },
    util,
    settings: settings.view,
    log: {
      fatal: logAt('fatal'),
      error: logAt('error'),
      warn: logAt('warn'),
      info: logAt('info'),
      debug: logAt('debug'),
      trace: logAt('trace'),
      audit: logAt('audit'),
      metric: () => false,
      /** `{level, msg}` with a numeric or named level; anything else (cron-plus passes a string) logs at info. */
      log: (entry: unknown) => {
        if (entry === null || typeof entry !== 'object') return logAt('info')(entry);
        const e = entry as { level?: unknown; msg?: unknown };
        const level = levelOf(e.level);
        if (level || e.level === LEVELS.METRIC) {
          if (level) logAt(level)(e.msg);
          return;
        }
        logAt('info')(e.msg ?? entry);
      },
      _: createTranslator('runtime', catalogs),
      ...LEVELS,
    },
    events: runtime.events,
    hooks: services.hooks,
    comms: {
      publish(topic: string, data: unknown, retain?: boolean) {
        runtime.events.emit('comms', { topic, data, retain: retain === true });
      },
    },
    library: {
      /** Node-RED keeps per-type library folders for the editor; a headless runtime only notes the type. */
      register(type: string) {
        log.debug({ module: set.module, type }, 'library type registered');
      },
    },
    plugins: {
      registerPlugin(id: string, definition: Record<string, unknown>) {
        registry.registerPlugin(set, id, definition);
      },
      get: (id: string) => registry.getPlugin(id),
      getByType: (type: string) => registry.getPluginsByType(type),
    },
    version: () => NODE_RED_COMPAT_VERSION,
    /** Resolves from the module's own directory first, then from the user directory. */
    require: (name: string): unknown => {
      if (!requireFromModule) return requireFromUserDir(name);
      try {
        requireFromModule.resolve(name);
      } catch {
        return requireFromUserDir(name);
      }
      return requireFromModule(name);
    },
    /**
     * Like `require`: the module's own dependencies first, then what function nodes had installed
     * (`<userDir>/externalModules`), then the user directory's. Beyond the module's own
     * dependencies, `externalModules.modules` may refuse a name, as in Node-RED; a function node's
     * `name@version` imports `name`. URLs (`data:`, `file:`) and, for the core nodes, paths are
     * refused: a flow's function node must not run host code the sandbox would not allow.
     */
    import: async (spec: string) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(spec) && !isBuiltin(spec)) throw notAllowedError(spec, 'not a package name');
      if (spec.startsWith('.') || path.isAbsolute(spec)) {
        if (!options.moduleDir) throw notAllowedError(spec, 'not a package name');
        return import(pathToFileURL(path.resolve(options.moduleDir, spec)).href);
      }
      const { name, importPath, version } = splitSpec(spec);
      if (!isPlainImportPath(importPath)) throw notAllowedError(spec, 'not a package name');
      const own = options.moduleDir && !isBuiltin(importPath) ? resolveImport(importPath, options.moduleDir) : undefined;
      if (own) return import(pathToFileURL(own).href);
      if (!modulePolicy.allows(name, version)) throw notAllowedError(spec, 'refused by externalModules.modules');
      if (isBuiltin(importPath)) return import(importPath);
      for (const dir of [externalModulesDir(runtime.settings.userDir), runtime.settings.userDir]) {
        const file = resolveImport(importPath, dir);
        if (file) return import(pathToFileURL(file).href);
      }
      return import(importPath);
    },
    get httpNode() {
      return runtime.httpNode;
    },
    get httpAdmin() {
      return runtime.httpAdmin;
    },
    get server() {
      return runtime.server;
    },
    cluster: runtime.cluster,
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
                res.statusCode = result.status;
                res.setHeader('Content-Type', 'application/json');
                res.end(JSON.stringify({ code: result.code, message: result.message }));
              }
            },
            (err) => next(err),
          );
        };
      },
    },
    _: createTranslator(namespace, catalogs),
  };
}
