import path from 'node:path';
import { HTTP_SECURITY_KEYS, parseHttpSecurity, type HttpSecuritySettings } from './http.js';
import { parseLogging, type LoggingSettings } from './logging.js';
import { storageModuleProblem, type NodeRedStorageModule } from './storage-module.js';
import { unsupportedSettings } from './unsupported.js';
import { parseOidc, type OidcSettings } from './admin-oidc.js';
import { SettingsError } from './settings-error.js';
import { parseCookieOptions, parseStrategy, parseStrategyUsers, type CookieOptions, type StrategySettings, type StrategyUser, type UsersFunction } from './admin-strategy.js';
import { parseClusterTimings, type ClusterTimings } from './cluster.js';
import { parseQueueSettings, type QueueSettings } from './queues.js';

import { ownCommand } from '../base/own-command.js';

/** A configured admin user. `password` is a bcrypt hash. */
export interface UserConfig {
  username: string;
  password: string;
  permissions: string | string[];
}

interface AdminAuthCommon {
  /** Token lifetime in seconds. */
  sessionExpiryTime: number;
  /** Live sessions kept in all; beyond it the oldest expires (audited). */
  maxSessions: number;
  /** Seconds within which a strategy login's one-time code must be exchanged (Node-RED 5's default: 20). */
  exchangeCodeExpiryTime: number;
  /** Node-RED's `adminAuth.tokens`: resolves a bearer token Runnel did not issue to a user, or null. */
  tokens?: (token: string) => Promise<{ username: string; permissions: string | string[] } | null | undefined> | { username: string; permissions: string | string[] } | null | undefined;
  /** Node-RED's `adminAuth.default`: what a request without a token may do. */
  default?: { permissions: string | string[] };
}

export interface CredentialsAuthConfig extends AdminAuthCommon {
  type: 'credentials';
  users: UserConfig[];
}

/** Node-RED's `adminAuth.type: "strategy"`: a Passport strategy logs users in. */
export interface StrategyAuthConfig extends AdminAuthCommon {
  type: 'strategy';
  strategy: StrategySettings;
  users: StrategyUser[] | UsersFunction;
}

/** Runnel's own OpenID Connect login, with local users (if any) as emergency accounts beside it. */
export interface OidcAuthConfig extends AdminAuthCommon {
  type: 'oidc';
  oidc: OidcSettings;
  users: UserConfig[];
}

export type AdminAuthConfig = CredentialsAuthConfig | StrategyAuthConfig | OidcAuthConfig;

export interface PaletteSettings {
  allowInstall: boolean;
  allowUpload: boolean;
  allowInstallScripts: boolean;
  allowLocalPaths: boolean;
  /** Let uploaded and local modules depend on file:, link:, git or URL specs. */
  allowNonRegistryDependencies: boolean;
  /** Node-RED's install lists, undefined when not given (their meaning depends on it: see ModuleRules). */
  allowList: string[] | undefined;
  denyList: string[] | undefined;
  /** Node-RED's: false refuses installing a module that is already there (update_not_allowed). */
  allowUpdate: boolean;
  /** Node-RED's update lists; undefined when not given (their meaning depends on it: see assertUpdateAllowed). */
  allowUpdateList: string[] | undefined;
  denyUpdateList: string[] | undefined;
  /** Bytes. */
  maxUploadSize: number;
  /** Milliseconds. */
  installTimeout: number;
}

/**
 * Modules function nodes list in their Setup tab (Node-RED's `externalModules.modules`). The lists
 * hold `name` or `name@range` patterns with `*`, matched with Node-RED's precedence rules.
 */
export interface FunctionModuleSettings {
  allowInstall: boolean;
  allowList: string[] | undefined;
  denyList: string[] | undefined;
  /** Milliseconds; Runnel's addition, as for the palette. */
  installTimeout: number;
}

/**
 * Runtime settings. Key names are Node-RED's, so a Node-RED settings file carries over;
 * unknown keys are kept (contributed nodes read their own settings through RED.settings).
 */
export interface Settings extends HttpSecuritySettings {
  uiPort: number;
  uiHost: string;
  userDir: string;
  flowFile: string;
  flowFilePretty: boolean;
  /** string = user key; false = unencrypted; undefined = generated system key. */
  credentialSecret: string | false | undefined;
  adminAuth: AdminAuthConfig | undefined;
  /** The strategy login's session cookie (Node-RED uses it in strategy mode only). */
  httpAdminCookieOptions: CookieOptions;
  httpAdminRoot: string;
  httpNodeRoot: string;
  /** What a path under httpNodeRoot that no flow serves answers: Express's HTML page (as Node-RED) or `{code, message}` JSON. */
  httpNodeNotFound: 'express' | 'json';
  /** Milliseconds an http-in request that finds no route waits while flows start or a deploy replaces them; 0 = no wait. */
  httpNodeRouteWait: number;
  /** Bytes (accepts "5mb" style strings in the file). */
  apiMaxLength: number;
  /** Bytes of one message a `websocket in` listener or client accepts (Node-RED: 100 MiB, ws's default). */
  webSocketNodeMaxPayload: number;
  /** Bounds on the connections of `websocket in` listeners (see src/nodes/network/websocket/admission.ts). */
  webSocketNodeLimits: { maxConnections: number; perListener: number; perAddress: number; idleTimeout: number; pingInterval: number };
  nodeCloseTimeout: number;
  /** Node-RED's safe mode (`--safe`, `RUNNEL_SAFE=1`): the flows are loaded, not started, until a deploy or POST /flows/state starts them. */
  safeMode: boolean;
  /** Node-RED's `--verbose`: a node's error is logged with its stack. */
  verbose: boolean;
  functionGlobalContext: Record<string, unknown>;
  /** Node-RED's: seconds, the editor's default `timeout` for new function nodes (GET /settings exports it). */
  functionTimeout: number;
  /** Node-RED's: seconds a function node without a `timeout` of its own may run per message before the event loop gets a turn; 0 = no limit. */
  globalFunctionTimeout: number;
  /** Messages waiting for delivery beyond which the tab that floods the queue is stopped. */
  messageQueueLimit: number;
  /** Let function nodes reach `process` and `require`. */
  functionAllowHostAccess: boolean;
  /** `false`: function nodes may not list modules (Node-RED's default is true). */
  functionExternalModules: boolean;
  nodesDir: string[];
  /** Node-RED's: node file and module directory names (`90-exec.js`, `node-red-contrib-foo`) that are not loaded. */
  nodesExcludes: string[];
  /** Node-RED's: when set, the only node file and module directory names that are loaded. */
  nodesIncludes: string[] | undefined;
  /** Process env variables flows may not read (Node-RED's `envVarExcludes`). */
  envVarExcludes: string[];
  /** The console logger and Node-RED's custom log handlers. */
  logging: LoggingSettings;
  externalModules: {
    palette: PaletteSettings;
    modules: FunctionModuleSettings;
    /** Node-RED's: install at start the node modules `.config.nodes.json` (or Runnel's record) lists and the user dir lacks. */
    autoInstall: boolean;
    /** Milliseconds between attempts at a failed automatic install (the setting is in seconds). */
    autoInstallRetry: number;
  };
  /** Login throttling: failures allowed per window before 429. */
  loginThrottle: { maxFailures: number; windowMs: number; userDelayMs: number; maxUserDelayMs: number };
  /** CORS for the admin API; off when undefined. */
  httpAdminCors: { origin: string | string[]; credentials?: boolean } | undefined;
  /**
   * Node-RED's `httpServerOptions['trust proxy']` (Express's values: true, a hop count, addresses,
   * CIDRs or loopback/linklocal/uniquelocal): which proxies' X-Forwarded-For names the client
   * address (login throttling, audit lines). false (default): the socket's address.
   */
  trustProxy: boolean | number | string | string[];
  /** Bounds on connections and the bodies being received (see src/server/request-limits.ts). */
  httpServerLimits: { bodyBufferTotal: number; headersTimeout: number; requestTimeout: number; bodyTimeout: number; keepAliveTimeout: number; maxConnections: number };
  /** Host names (or `*.domain`) an unauthenticated admin API answers to besides IP literals, localhost and uiHost. */
  httpAdminAllowedHosts: string[];
  /** Named context stores; undefined when none are configured (one memory store, Node-RED's default). */
  contextStorage: ContextStorageSettings | undefined;
  /** Where flows, credentials, sessions and runtime settings live. */
  storage: StorageSettings;
  /** Node-RED's `storageModule`: a custom module with its storage API keeps the flows instead of the user dir's files. */
  storageModule: NodeRedStorageModule | undefined;
  /** This instance's name in a cluster; undefined = generated once and kept in the user dir. */
  instanceId: string | undefined;
  /** How other instances and operators reach this one (shown in GET /cluster). */
  instanceUrl: string | undefined;
  /** Revisions kept for history and rollback. */
  flowHistory: { max: number };
  /** The queue nodes' durable queues. */
  queues: QueueSettings;
  /** GET /metrics: off unless enabled; `permission` requires a token; `port` serves it on its own listener. */
  metrics: { enabled: boolean; permission?: string; port?: number };
  /** Turns off the Node-RED editor (the page and its files; the admin API stays). */
  disableEditor: boolean;
  /** Node-RED's editor theme: page, header, login, palette, projects, tours, codeEditor, ... */
  editorTheme: Record<string, unknown>;
  /** Extra keys from the settings file, visible to nodes through RED.settings. */
  extra: Record<string, unknown>;
  /** Node-RED settings of the file that Runnel does not act on (warned about at start). */
  unsupported: string[];
  /** Absolute path of the settings file, if one was given. */
  settingsFile: string | undefined;
}

/**
 * The storage backend: files in the user dir (the default), or a PostgreSQL database that several
 * instances share (a cluster).
 */
export type StorageSettings =
  | { type: 'file' }
  | { type: 'postgres'; url: string; schema: string; poolSize: number; cluster: ClusterTimings };

/** A context store's implementation: a built-in by name, or Node-RED's store factory `(config) => store`. */
export type ContextStoreModule = 'memory' | 'localfilesystem' | 'postgres' | ((config: Record<string, unknown>) => unknown);

export interface ContextStoreSettings {
  module: ContextStoreModule;
  config?: Record<string, unknown>;
}

/**
 * Node-RED's `contextStorage`, validated and in its own shape (nodes may read it through RED.settings):
 * store name → store, in the file's order; `default` may instead name another store.
 */
export type ContextStorageSettings = Record<string, ContextStoreSettings | string>;


/** Relative to the working directory, as Node-RED's `--userDir`. */
export const DEFAULT_USER_DIR = './.runnel';

export { SettingsError };

const KNOWN_KEYS = new Set([
  'uiPort', 'uiHost', 'userDir', 'flowFile', 'flowFilePretty', 'credentialSecret', 'adminAuth', 'httpAdminCookieOptions',
  'httpAdminRoot', 'httpNodeRoot', 'httpNodeNotFound', 'httpNodeRouteWait', 'apiMaxLength', 'nodeCloseTimeout', 'functionGlobalContext',
  'functionTimeout', 'globalFunctionTimeout', 'messageQueueLimit', 'functionAllowHostAccess', 'functionExternalModules', 'nodesDir', 'nodesExcludes', 'nodesIncludes', 'autoInstallModules', 'autoInstallModulesRetry', 'logging', 'externalModules',
  'loginThrottle', 'httpAdminCors', 'httpAdminAllowedHosts', 'httpServerOptions', 'httpServerLimits', 'envVarExcludes', 'contextStorage', 'flowHistory', 'metrics', 'queues', 'disableEditor', 'editorTheme', 'storage', 'storageModule',
  'instanceId', 'instanceUrl', 'safeMode', 'verbose', 'webSocketNodeMaxPayload', 'webSocketNodeLimits', ...HTTP_SECURITY_KEYS,
]);

/** Parses sizes such as 5mb, 200kb, 1048576. */
function parseSize(value: unknown, key: string): number {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return Math.floor(value);
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(value);
    if (m) {
      const mult = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
      return Math.floor(Number(m[1]) * mult);
    }
  }
  throw new SettingsError(`${key} must be a size such as "5mb" or a positive number of bytes`);
}

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pick<T>(raw: Raw, key: string, check: (v: unknown) => boolean, what: string, dflt: T): T {
  const v = raw[key];
  if (v === undefined) return dflt;
  if (check(v)) return v as T;
  // Node-RED takes numbers from the environment (`uiPort: process.env.PORT || 1880`) and coerces them.
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (Number.isFinite(n) && check(n)) return n as T;
  throw new SettingsError(`${key} must be ${what}`);
}

const isInt = (min: number, max: number) => (v: unknown) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const isSeconds = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 3600;
const isString = (v: unknown) => typeof v === 'string';
const isNonEmptyString = (v: unknown) => typeof v === 'string' && v.length > 0;
const isBool = (v: unknown) => typeof v === 'boolean';
const isStringList = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');

function normaliseRoot(v: string, key: string): string {
  if (!v.startsWith('/')) throw new SettingsError(`${key} must start with "/"`);
  return v.endsWith('/') && v.length > 1 ? v.slice(0, -1) : v;
}

function parseAdminAuth(v: unknown): AdminAuthConfig | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new SettingsError('adminAuth must be an object');
  if (v.type !== 'credentials' && v.type !== 'strategy' && v.type !== 'oidc') {
    throw new SettingsError(`adminAuth.type ${JSON.stringify(v.type)} is not supported (use "credentials", "strategy" or "oidc")`);
  }
  const common = parseAuthCommon(v);
  if (v.type === 'strategy') return { type: 'strategy', ...common, strategy: parseStrategy(v.strategy), users: parseStrategyUsers(v.users) };
  if (v.type === 'oidc') return { type: 'oidc', ...common, oidc: parseOidc(v), users: v.users === undefined ? [] : localUsers(v.users) };
  return { type: 'credentials', users: localUsers(v.users), ...common };
}

/** Users with bcrypt passwords: the credentials login's, or the emergency accounts beside an OIDC login. */
function localUsers(v: unknown): UserConfig[] {
  const rawUsers = Array.isArray(v) ? v : isObject(v) ? [v] : null;
  if (!rawUsers) throw new SettingsError('adminAuth.users must be an array of {username, password, permissions}');
  const seen = new Set<string>();
  return rawUsers.map((u, i) => {
    const where = `adminAuth.users[${i}]`;
    if (!isObject(u)) throw new SettingsError(`${where} must be an object`);
    if (!isNonEmptyString(u.username)) throw new SettingsError(`${where}.username must be a non-empty string`);
    if (typeof u.password !== 'string' || !/^\$2[aby]\$\d\d\$.{53}$/.test(u.password)) {
      throw new SettingsError(`${where}.password must be a bcrypt hash ($2a$/$2b$); make one with "${ownCommand('hash-pw')}"`);
    }
    const p = u.permissions ?? '*';
    if (!(typeof p === 'string' || isStringList(p))) {
      throw new SettingsError(`${where}.permissions must be a string or an array of strings`);
    }
    if (seen.has(u.username as string)) throw new SettingsError(`${where}.username "${u.username}" is listed twice`);
    seen.add(u.username as string);
    return { username: u.username as string, password: u.password, permissions: p as string | string[] };
  });
}


function parseAuthCommon(v: Raw): AdminAuthCommon {
  const sessionExpiryTime = pick(v, 'sessionExpiryTime', isInt(1, 10 * 365 * 86400), 'a positive number of seconds', 604800);
  if (v.tokens !== undefined && typeof v.tokens !== 'function') throw new SettingsError('adminAuth.tokens must be a function (token) => user, from a .js settings file');
  const dflt = v.default;
  if (dflt !== undefined && !(isObject(dflt) && (isNonEmptyString(dflt.permissions) || (isStringList(dflt.permissions) && (dflt.permissions as string[]).length > 0)))) {
    throw new SettingsError('adminAuth.default must be {permissions: "read" | [..]}');
  }
  const maxSessions = pick(v, 'maxSessions', isInt(1, 10_000_000), 'a positive integer', 10_000);
  const exchangeCodeExpiryTime = pick(v, 'exchangeCodeExpiryTime', isInt(1, 600), 'a number of seconds from 1 to 600', 20);
  return {
    sessionExpiryTime,
    maxSessions,
    exchangeCodeExpiryTime,
    ...(v.tokens === undefined ? {} : { tokens: v.tokens as AdminAuthConfig['tokens'] }),
    ...(dflt === undefined ? {} : { default: { permissions: (dflt as Raw).permissions as string | string[] } }),
  };
}

/** Reads one object under `externalModules` (`palette`, `modules`) with typed accessors. */
function section(ext: Raw, name: string) {
  const raw = ext[name] === undefined ? {} : ext[name];
  if (!isObject(raw)) throw new SettingsError(`externalModules.${name} must be an object`);
  const k = (key: string) => `externalModules.${name}.${key}`;
  return {
    raw,
    k,
    bool(key: string, d: boolean): boolean {
      const x = raw[key];
      if (x === undefined) return d;
      if (typeof x !== 'boolean') throw new SettingsError(`${k(key)} must be true or false`);
      return x;
    },
    /** Undefined when not given: Node-RED's module lists mean something else then. */
    list(key: string): string[] | undefined {
      const x = raw[key];
      if (x === undefined) return undefined;
      if (!isStringList(x)) throw new SettingsError(`${k(key)} must be an array of strings`);
      return x as string[];
    },
    timeout(key: string, d: number): number {
      const x = raw[key];
      if (x === undefined) return d;
      if (!isInt(1, 3_600_000)(x)) throw new SettingsError(`${k(key)} must be milliseconds between 1 and 3600000`);
      return x as number;
    },
  };
}

/**
 * Node-RED's `externalModules.autoInstall`/`autoInstallRetry` (seconds), or their deprecated
 * top-level forms `autoInstallModules`/`autoInstallModulesRetry` (milliseconds) when not given.
 */
function parseAutoInstall(ext: Raw, raw: Raw): { autoInstall: boolean; autoInstallRetry: number } {
  const on = ext.autoInstall ?? raw.autoInstallModules;
  if (on !== undefined && typeof on !== 'boolean') throw new SettingsError('externalModules.autoInstall must be true or false');
  const seconds = ext.autoInstallRetry;
  const ms = raw.autoInstallModulesRetry;
  if (seconds !== undefined && !isInt(1, 86_400)(seconds)) throw new SettingsError('externalModules.autoInstallRetry must be seconds between 1 and 86400');
  if (seconds === undefined && ms !== undefined && !isInt(1000, 86_400_000)(ms)) throw new SettingsError('autoInstallModulesRetry must be milliseconds between 1000 and 86400000');
  return { autoInstall: on === true, autoInstallRetry: seconds !== undefined ? (seconds as number) * 1000 : ((ms as number | undefined) ?? 30_000) };
}

function parseExternalModules(v: unknown, editorTheme: unknown, raw: Raw): Settings['externalModules'] {
  const ext = v === undefined ? {} : v;
  if (!isObject(ext)) throw new SettingsError('externalModules must be an object');
  const pal = section(ext, 'palette');
  const mods = section(ext, 'modules');
  // Node-RED still honours its deprecated switches editorTheme.palette.editable and .upload.
  const themePalette = isObject(editorTheme) && isObject(editorTheme.palette) ? editorTheme.palette : {};
  return {
    palette: {
      allowInstall: pal.bool('allowInstall', true) && themePalette.editable !== false,
      allowUpload: pal.bool('allowUpload', true) && themePalette.upload !== false && themePalette.editable !== false,
      allowInstallScripts: pal.bool('allowInstallScripts', false),
      allowLocalPaths: pal.bool('allowLocalPaths', true),
      allowNonRegistryDependencies: pal.bool('allowNonRegistryDependencies', false),
      allowList: pal.list('allowList'),
      denyList: pal.list('denyList'),
      allowUpdate: pal.bool('allowUpdate', true),
      allowUpdateList: pal.list('allowUpdateList'),
      denyUpdateList: pal.list('denyUpdateList'),
      maxUploadSize: pal.raw.maxUploadSize === undefined ? 20 * 1024 * 1024 : parseSize(pal.raw.maxUploadSize, pal.k('maxUploadSize')),
      installTimeout: pal.timeout('installTimeout', 5 * 60 * 1000),
    },
    modules: {
      allowInstall: mods.bool('allowInstall', true),
      allowList: mods.list('allowList'),
      denyList: mods.list('denyList'),
      installTimeout: mods.timeout('installTimeout', 5 * 60 * 1000),
    },
    ...parseAutoInstall(ext, raw),
  };
}

const BUILTIN_STORES = ['memory', 'localfilesystem', 'postgres'];

/**
 * Node-RED's rules (context/index.js load): names are `[a-zA-Z0-9_]+`, `_` is reserved and skipped,
 * a string `default` must name a configured store, every other entry needs a `module`. Node-RED
 * resolves a module name only among its built-ins; any other store is given as the module itself
 * (a factory function, required in a .js settings file).
 */
function parseContextStorage(v: unknown, baseDir: string): ContextStorageSettings | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new SettingsError('contextStorage must be an object of store name → { module, config }');
  const result: ContextStorageSettings = {};
  for (const [name, entry] of Object.entries(v)) {
    if (name === '_') continue;
    const where = `contextStorage.${name}`;
    if (!/^[a-zA-Z0-9_]+$/.test(name)) throw new SettingsError(`Invalid context store name: '${name}' (use letters, digits and _)`);
    if (name === 'default' && typeof entry === 'string') {
      if (entry === 'default' || entry === '_' || !Object.hasOwn(v, entry)) {
        throw new SettingsError(`Default context store unknown: '${entry}' (contextStorage.default must name a configured store)`);
      }
      result.default = entry;
      continue;
    }
    if (!isObject(entry) || entry.module === undefined) throw new SettingsError(`Context store '${name}' missing 'module' option`);
    const module = entry.module;
    if (typeof module === 'string' ? !BUILTIN_STORES.includes(module) : typeof module !== 'function') {
      throw new SettingsError(
        `${where}.module must be "memory", "localfilesystem", "postgres" or a context store module (require it in a .js settings file), got ${JSON.stringify(module) ?? typeof module}`,
      );
    }
    const config = entry.config === undefined ? {} : entry.config;
    if (!isObject(config)) throw new SettingsError(`${where}.config must be an object`);
    result[name] = { module: module as ContextStoreModule, config: module === 'localfilesystem' ? fileStoreConfig(config, where, baseDir) : config };
  }
  return Object.keys(result).some((name) => typeof result[name] !== 'string') ? result : undefined;
}

/** localfilesystem options: `dir` (default userDir) and `base` ("context"), `cache` (true), `flushInterval` (30 s). */
function fileStoreConfig(config: Raw, where: string, baseDir: string): Raw {
  const k = (key: string) => `${where}.config.${key}`;
  if (config.dir !== undefined && !isNonEmptyString(config.dir)) throw new SettingsError(`${k('dir')} must be a directory path`);
  if (config.base !== undefined && !isNonEmptyString(config.base)) throw new SettingsError(`${k('base')} must be a directory name`);
  if (config.cache !== undefined && !isBool(config.cache)) throw new SettingsError(`${k('cache')} must be true or false`);
  const interval = config.flushInterval;
  if (interval !== undefined && !(typeof interval === 'number' && Number.isFinite(interval) && interval >= 0)) {
    throw new SettingsError(`${k('flushInterval')} must be a number of seconds (0 or more)`);
  }
  return config.dir === undefined ? { ...config } : { ...config, dir: path.resolve(baseDir, config.dir as string) };
}

/**
 * Environment variables that configure Runnel and hold its secrets (the database URL carries its
 * password). They are the runtime's, not the flows' environment: env lookups never answer them,
 * whatever envVarExcludes says, and `runnel start` removes them from process.env once read.
 */
export const RUNTIME_SECRET_ENV: readonly string[] = ['RUNNEL_STORAGE_URL'];

/** `RUNNEL_STORAGE_URL` wins over the file's `storage.url` (and implies type postgres). */
function parseStorage(v: unknown, envUrl: string | undefined): StorageSettings {
  if (v !== undefined && v !== null && !isObject(v)) throw new SettingsError('storage must be an object such as {"type": "file"}');
  const raw: Raw = isObject(v) ? v : {};
  const type = envUrl ? 'postgres' : (raw.type ?? 'file');
  if (type === 'file') return { type: 'file' };
  if (type !== 'postgres') throw new SettingsError(`storage.type ${JSON.stringify(type)} is not supported (use "file" or "postgres")`);
  const url = envUrl || raw.url;
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url)) {
    throw new SettingsError('storage.url must be a postgresql://user:password@host:port/database URL (or set RUNNEL_STORAGE_URL)');
  }
  const schema = raw.schema ?? 'runnel';
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new SettingsError('storage.schema must be a schema name of lower-case letters, digits and _');
  }
  const poolSize = raw.poolSize ?? 10;
  if (!isInt(1, 1000)(poolSize)) throw new SettingsError('storage.poolSize must be an integer between 1 and 1000');
  return { type: 'postgres', url, schema, poolSize: poolSize as number, cluster: parseClusterTimings(raw.cluster) };
}

/**
 * Node-RED takes a module object (required in settings.js) or the name of one of its own: only
 * `localfilesystem`, which is Runnel's file backend.
 */
function parseStorageModule(v: unknown, storage: StorageSettings): NodeRedStorageModule | undefined {
  if (v === undefined || v === null || v === 'localfilesystem') return undefined;
  if (typeof v === 'string') {
    throw new SettingsError(`storageModule ${JSON.stringify(v)} is not a built-in storage ("localfilesystem" is the only one): require the module in a .js settings file, e.g. storageModule: require("${v}")`);
  }
  const problem = storageModuleProblem(v);
  if (problem !== undefined) throw new SettingsError(`storageModule ${problem}`);
  if (storage.type === 'postgres') {
    throw new SettingsError('storageModule cannot be combined with storage.type "postgres" (or RUNNEL_STORAGE_URL): a cluster keeps its flows in PostgreSQL; remove one of the two');
  }
  return v as NodeRedStorageModule;
}

function objectSetting(raw: Raw, key: string): Raw {
  const v = raw[key] ?? {};
  if (!isObject(v)) throw new SettingsError(`${key} must be an object`);
  return v;
}

function parseMetrics(m: Raw): Settings['metrics'] {
  const permission = pick<string | undefined>(m, 'permission', isNonEmptyString, 'a permission such as "metrics.read" (metrics.permission)', undefined);
  const port = pick<number | undefined>(m, 'port', isInt(0, 65535), 'an integer port (metrics.port)', undefined);
  return {
    enabled: pick(m, 'enabled', isBool, 'true or false (metrics.enabled)', false),
    ...(permission === undefined ? {} : { permission }),
    ...(port === undefined ? {} : { port }),
  };
}

function parseServerLimits(v: unknown): Settings['httpServerLimits'] {
  const raw = v === undefined ? {} : v;
  if (!isObject(raw)) throw new SettingsError('httpServerLimits must be an object');
  const ms = (key: string, dflt: number) => pick(raw, key, isInt(1, 3_600_000), `milliseconds (httpServerLimits.${key})`, dflt);
  const headersTimeout = ms('headersTimeout', 20_000);
  const requestTimeout = ms('requestTimeout', 120_000);
  if (headersTimeout > requestTimeout) throw new SettingsError('httpServerLimits.headersTimeout may not exceed requestTimeout');
  return {
    bodyBufferTotal: raw.bodyBufferTotal === undefined ? 256 * 1024 * 1024 : parseSize(raw.bodyBufferTotal, 'httpServerLimits.bodyBufferTotal'),
    headersTimeout,
    requestTimeout,
    bodyTimeout: ms('bodyTimeout', 10_000),
    keepAliveTimeout: ms('keepAliveTimeout', 5_000),
    maxConnections: pick(raw, 'maxConnections', isInt(1, 1_000_000), 'a positive integer (httpServerLimits.maxConnections)', 900),
  };
}

/** The defaults keep flow websockets to a quarter of the connection cap, so they cannot take the admin's share. */
function parseWebSocketLimits(v: unknown, connectionCap: number): Settings['webSocketNodeLimits'] {
  const raw = v === undefined ? {} : v;
  if (!isObject(raw)) throw new SettingsError('webSocketNodeLimits must be an object');
  const count = (key: string, dflt: number) => pick(raw, key, isInt(1, 1_000_000), `a positive integer (webSocketNodeLimits.${key})`, dflt);
  const ms = (key: string, dflt: number) => pick(raw, key, isInt(1, 86_400_000), `milliseconds (webSocketNodeLimits.${key})`, dflt);
  const maxConnections = count('maxConnections', Math.max(1, Math.floor(connectionCap / 4)));
  return {
    maxConnections,
    perListener: count('perListener', maxConnections),
    perAddress: count('perAddress', 20),
    idleTimeout: ms('idleTimeout', 300_000),
    pingInterval: ms('pingInterval', 30_000),
  };
}

function parseTrustProxy(options: unknown): Settings['trustProxy'] {
  if (options === undefined || options === null) return false;
  if (!isObject(options)) throw new SettingsError('httpServerOptions must be an object');
  const v = options['trust proxy'];
  if (v === undefined) return false;
  if (typeof v === 'boolean' || isInt(0, 100)(v) || isNonEmptyString(v) || (isStringList(v) && (v as string[]).length > 0)) return v as Settings['trustProxy'];
  throw new SettingsError('httpServerOptions["trust proxy"] must be true/false, a hop count, or addresses/CIDRs (a string or an array)');
}

/** Validates a raw settings object and fills the defaults. Throws SettingsError with a one-line reason. */
export function resolveSettings(raw: Raw, baseDir = process.cwd(), settingsFile?: string, env: NodeJS.ProcessEnv = process.env): Settings {
  if (!isObject(raw)) throw new SettingsError('settings must be an object');
  const credentialSecret = raw.credentialSecret;
  if (!(credentialSecret === undefined || credentialSecret === false || isNonEmptyString(credentialSecret))) {
    throw new SettingsError('credentialSecret must be a non-empty string or false');
  }
  const logging = parseLogging(raw.logging, (message) => {
    throw new SettingsError(message);
  });
  const fgc = pick<Raw>(raw, 'functionGlobalContext', isObject, 'an object', {});
  const nodesDirRaw = raw.nodesDir;
  let nodesDir: string[] = [];
  if (typeof nodesDirRaw === 'string') nodesDir = [nodesDirRaw];
  else if (nodesDirRaw !== undefined && nodesDirRaw !== null) {
    if (!isStringList(nodesDirRaw)) throw new SettingsError('nodesDir must be a path or an array of paths');
    nodesDir = nodesDirRaw as string[];
  }
  const throttle = raw.loginThrottle === undefined ? {} : raw.loginThrottle;
  if (!isObject(throttle)) throw new SettingsError('loginThrottle must be an object');
  const cors = raw.httpAdminCors;
  if (cors !== undefined && !(isObject(cors) && (isString(cors.origin) || isStringList(cors.origin)))) {
    throw new SettingsError('httpAdminCors must be an object with an origin string or array');
  }
  if (raw.httpAdminAllowedHosts !== undefined && !isStringList(raw.httpAdminAllowedHosts)) {
    throw new SettingsError('httpAdminAllowedHosts must be an array of host names');
  }
  for (const key of ['httpAdminRoot', 'httpNodeRoot']) {
    if (raw[key] === false) throw new SettingsError(`${key}: false (Node-RED's way to turn its routes off) is not supported: give a path such as "/"`);
  }
  for (const key of ['nodesExcludes', 'nodesIncludes']) {
    if (raw[key] !== undefined && !isStringList(raw[key])) throw new SettingsError(`${key} must be an array of node file or module directory names`);
  }
  if (raw.envVarExcludes !== undefined && !isStringList(raw.envVarExcludes)) {
    throw new SettingsError('envVarExcludes must be an array of variable names');
  }
  const storage = parseStorage(raw.storage, env.RUNNEL_STORAGE_URL);
  const extra: Raw = {};
  for (const [key, value] of Object.entries(raw)) if (!KNOWN_KEYS.has(key)) extra[key] = value;
  const http = parseHttpSecurity(raw, baseDir);
  const httpServerLimits = parseServerLimits(raw.httpServerLimits);

  return {
    uiPort: pick(raw, 'uiPort', isInt(0, 65535), 'an integer port between 0 and 65535', 1880),
    uiHost: pick(raw, 'uiHost', isNonEmptyString, 'a host name or address', '127.0.0.1'),
    userDir: path.resolve(baseDir, pick(raw, 'userDir', isNonEmptyString, 'a directory path', DEFAULT_USER_DIR)),
    flowFile: pick(raw, 'flowFile', isNonEmptyString, 'a file name', 'flows.json'),
    flowFilePretty: pick(raw, 'flowFilePretty', isBool, 'true or false', false),
    credentialSecret: credentialSecret as string | false | undefined,
    adminAuth: parseAdminAuth(raw.adminAuth),
    httpAdminCookieOptions: parseCookieOptions(raw.httpAdminCookieOptions),
    httpAdminRoot: normaliseRoot(pick(raw, 'httpAdminRoot', isString, 'a path', '/'), 'httpAdminRoot'),
    httpNodeRoot: normaliseRoot(pick(raw, 'httpNodeRoot', isString, 'a path', '/'), 'httpNodeRoot'),
    httpNodeNotFound: pick(raw, 'httpNodeNotFound', (v) => v === 'express' || v === 'json', '"express" or "json"', 'express' as const),
    httpNodeRouteWait: pick(raw, 'httpNodeRouteWait', isInt(0, 3_600_000), 'milliseconds (0 = no wait)', 10000),
    apiMaxLength: raw.apiMaxLength === undefined ? 5 * 1024 * 1024 : parseSize(raw.apiMaxLength, 'apiMaxLength'),
    webSocketNodeMaxPayload: raw.webSocketNodeMaxPayload === undefined ? 1024 * 1024 : parseSize(raw.webSocketNodeMaxPayload, 'webSocketNodeMaxPayload'),
    nodeCloseTimeout: pick(raw, 'nodeCloseTimeout', isInt(1, 3_600_000), 'milliseconds', 15000),
    safeMode: pick(raw, 'safeMode', isBool, 'true or false', false) || /^(1|true|yes)$/i.test(env.RUNNEL_SAFE ?? ''),
    verbose: pick(raw, 'verbose', isBool, 'true or false', false),
    functionGlobalContext: fgc,
    functionTimeout: pick(raw, 'functionTimeout', isSeconds, 'seconds (0 = none)', 0),
    // Node-RED's default is no limit; Runnel's is 10 s, so runaway code cannot hold the process unasked.
    globalFunctionTimeout: pick(raw, 'globalFunctionTimeout', isSeconds, 'seconds (0 = no limit)', 1),
    messageQueueLimit: pick(raw, 'messageQueueLimit', isInt(1000, 1_000_000_000), 'a number of messages (at least 1000)', 1_000_000),
    functionAllowHostAccess: pick(raw, 'functionAllowHostAccess', isBool, 'true or false', false),
    functionExternalModules: pick(raw, 'functionExternalModules', isBool, 'true or false', true),
    nodesDir: nodesDir.map((d) => path.resolve(baseDir, d)),
    nodesExcludes: (raw.nodesExcludes as string[] | undefined) ?? [],
    nodesIncludes: raw.nodesIncludes as string[] | undefined,
    envVarExcludes: (raw.envVarExcludes as string[] | undefined) ?? [],
    logging,
    externalModules: parseExternalModules(raw.externalModules, raw.editorTheme, raw),
    loginThrottle: {
      maxFailures: pick(throttle, 'maxFailures', isInt(1, 1_000_000), 'a positive integer', 5),
      windowMs: pick(throttle, 'windowMs', isInt(1000, 86_400_000), 'milliseconds', 10 * 60 * 1000),
      userDelayMs: pick(throttle, 'userDelayMs', isInt(1, 60_000), 'milliseconds', 500),
      maxUserDelayMs: pick(throttle, 'maxUserDelayMs', isInt(1, 600_000), 'milliseconds', 30_000),
    },
    httpAdminCors: cors as Settings['httpAdminCors'],
    trustProxy: parseTrustProxy(raw.httpServerOptions),
    httpServerLimits,
    webSocketNodeLimits: parseWebSocketLimits(raw.webSocketNodeLimits, httpServerLimits.maxConnections),
    httpAdminAllowedHosts: (raw.httpAdminAllowedHosts as string[] | undefined) ?? [],
    contextStorage: parseContextStorage(raw.contextStorage, baseDir),
    storage,
    storageModule: parseStorageModule(raw.storageModule, storage),
    instanceId: pick(raw, 'instanceId', (v) => typeof v === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(v), 'a name of letters, digits, ".", "_" and "-"', undefined),
    instanceUrl: pick(raw, 'instanceUrl', (v) => typeof v === 'string' && URL.canParse(v), 'an absolute URL', undefined),
    flowHistory: { max: pick(objectSetting(raw, 'flowHistory'), 'max', isInt(1, 100_000), 'a positive integer (flowHistory.max)', 50) },
    metrics: parseMetrics(objectSetting(raw, 'metrics')),
    queues: parseQueueSettings(raw.queues),
    disableEditor: pick(raw, 'disableEditor', isBool, 'true or false', false),
    editorTheme: pick<Raw>(raw, 'editorTheme', isObject, 'an object', {}),
    ...http,
    extra,
    unsupported: unsupportedSettings(raw),
    settingsFile,
  };
}
