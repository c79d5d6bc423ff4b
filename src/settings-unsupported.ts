/**
 * Node-RED settings Runnel does not act on. Keys of the settings file that Node-RED does not know
 * are contributed modules' own (read through RED.settings), so only Node-RED's are named; each is
 * listed in one warning line at start so that nothing a Node-RED user relies on is ignored silently.
 */
const UNSUPPORTED = [
  'httpRoot', 'httpAuth', 'httpAdminAuth', 'httpAdminCookieOptions',
  'autoInstallModules', 'autoInstallModulesRetry', 'nodesExcludes', 'exportGlobalContextKeys', 'runtimeMetricInterval',
  'runtimeSyncDelivery', 'globalFunctionTimeout', 'inboundWebSocketTimeout', 'webSocketKeepAliveTime',
  'debugUseColors',
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

/** The settings keys (`httpServerOptions["etag"]` for Express app settings) Runnel ignores. */
export function unsupportedSettings(raw: Record<string, unknown>): string[] {
  const found = UNSUPPORTED.filter((key) => raw[key] !== undefined);
  const options = raw.httpServerOptions;
  if (typeof options === 'object' && options !== null) {
    for (const [key, value] of Object.entries(options)) {
      const honoured = Object.hasOwn(SERVER_OPTIONS, key) && (SERVER_OPTIONS[key]?.(value) ?? true);
      if (!honoured) found.push(`httpServerOptions[${JSON.stringify(key)}]`);
    }
  }
  return found;
}
