import { RUNNEL_LOGGING_KEYS } from './logging.js';

/**
 * Node-RED's settings keys, each either honoured or named in one warning line at start, so that
 * nothing a Node-RED user relies on is ignored silently. The keys are those the stock settings.js of
 * Node-RED 4.1 lists (its section headers and its commented-out examples) and those Node-RED's
 * runtime reads; test/settings/node-red.test.ts audits the stock file against these lists. Keys
 * Node-RED does not know are contributed modules' own (read through RED.settings): never named.
 */

/**
 * Node-RED keys Runnel acts on: in src/settings/settings.ts and http.ts, in the editor's GET /settings
 * (`runtimeState`, `diagnostics`, `paletteCategories`, `nodeDefaults`; `telemetry` is off, as
 * `telemetry: {enabled: false}` asks: Runnel sends nothing anywhere), or in the core
 * nodes through RED.settings (`fileWorkingDirectory`, `nodeMessageBufferMaxLength`, `debug*`,
 * `execMaxBufferSize`, `httpRequestTimeout`, `mqttReconnectTime`, `socket*`, `tcpMsgQueueSize`,
 * `tlsConfigDisableLocalFiles`, `webSocketNodeVerifyClient`, `proxyOptions`). `ui` and
 * `serialReconnectTime` belong to node-red-dashboard and node-red-node-serialport, which read them
 * through RED.settings as they do in Node-RED. Some are honoured in part: see PARTLY.
 */
export const HONOURED: readonly string[] = [
  'flowFile', 'flowFilePretty', 'credentialSecret', 'userDir', 'nodesDir', 'nodesExcludes', 'nodesIncludes', 'autoInstallModules', 'autoInstallModulesRetry',
  'adminAuth', 'https', 'httpsRefreshInterval', 'requireHttps', 'httpNodeAuth', 'httpStaticAuth',
  'uiPort', 'uiHost', 'apiMaxLength', 'httpServerOptions', 'httpAdminRoot', 'httpAdminCookieOptions', 'httpAdminMiddleware', 'httpAdminCors',
  'httpNodeRoot', 'httpNodeCors', 'httpNodeMiddleware', 'httpStatic', 'httpStaticRoot', 'httpStaticCors', 'proxyOptions',
  'storageModule', 'runtimeState', 'telemetry', 'diagnostics', 'logging', 'contextStorage', 'exportGlobalContextKeys', 'externalModules', 'safeMode', 'envVarExcludes',
  'nodeCloseTimeout', 'disableEditor', 'editorTheme', 'paletteCategories', 'nodeDefaults',
  'fileWorkingDirectory', 'functionGlobalContext', 'functionExternalModules', 'functionTimeout', 'globalFunctionTimeout',
  'nodeMessageBufferMaxLength',
  'ui', 'debugMaxLength', 'debugStatusLength', 'execMaxBufferSize', 'httpRequestTimeout', 'mqttReconnectTime',
  'serialReconnectTime', 'socketReconnectTime', 'socketTimeout', 'tcpMsgQueueSize', 'tlsConfigDisableLocalFiles',
  'webSocketNodeVerifyClient',
];

/** Node-RED keys Runnel does not act on at all: named whenever they are set. */
export const UNSUPPORTED: readonly string[] = [
  'httpRoot', 'httpAuth', 'httpAdminAuth', 'readOnly',
  'runtimeMetricInterval',
  'runtimeSyncDelivery', 'inboundWebSocketTimeout', 'webSocketKeepAliveTime',
  'debugUseColors', 'httpRequestTimingLog',
];

/**
 * Settings (dotted paths) Runnel honours only for some values: named when the value asks for what
 * Runnel does not do. The first part of each path is a top-level key.
 */
export const PARTLY: ReadonlyArray<readonly [path: string, ignored: (value: unknown) => boolean]> = [
  // Runnel's own messages are English.
  ['lang', (v) => !(typeof v === 'string' && /^en(-|$)/i.test(v))],
  // Runnel sends nothing anywhere: no telemetry, no update check.
  ['telemetry.enabled', (v) => v === true],
  ['telemetry.updateNotification', (v) => v === true],
];


/**
 * Express app settings Runnel honours in `httpServerOptions`, with the values it honours (any
 * value when undefined). Queries are parsed the "simple" way (node:querystring).
 */
const SERVER_OPTIONS: Record<string, ((v: unknown) => boolean) | undefined> = {
  'trust proxy': undefined,
  'x-powered-by': undefined,
  etag: undefined,
  'case sensitive routing': undefined,
  'strict routing': undefined,
  'json spaces': undefined,
  'json replacer': undefined,
  'json escape': undefined,
  'jsonp callback name': undefined,
  'query parser': (v) => v === 'simple',
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function valueAt(raw: Record<string, unknown>, dotted: string): unknown {
  let v: unknown = raw;
  for (const part of dotted.split('.')) {
    if (!isObject(v)) return undefined;
    v = v[part];
  }
  return v;
}

/** The settings (`httpServerOptions["etag"]` for Express app settings, dotted paths within objects) Runnel ignores. */
export function unsupportedSettings(raw: Record<string, unknown>): string[] {
  const found = UNSUPPORTED.filter((key) => raw[key] !== undefined);
  for (const [dotted, ignored] of PARTLY) {
    const value = valueAt(raw, dotted);
    if (value !== undefined && ignored(value)) found.push(dotted);
  }
  if (isObject(raw.logging)) {
    // Node-RED makes a logger only of an entry with a handler: the others do nothing there either.
    for (const [key, entry] of Object.entries(raw.logging)) if (!RUNNEL_LOGGING_KEYS.has(key) && !(isObject(entry) && entry.handler !== undefined)) found.push(`logging.${key}`);
  }
  const options = raw.httpServerOptions;
  if (isObject(options)) {
    for (const [key, value] of Object.entries(options)) {
      const honoured = Object.hasOwn(SERVER_OPTIONS, key) && (SERVER_OPTIONS[key]?.(value) ?? true);
      if (!honoured) found.push(`httpServerOptions[${JSON.stringify(key)}]`);
    }
  }
  return found;
}
