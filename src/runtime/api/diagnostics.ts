import { existsSync } from 'node:fs';
import os from 'node:os';
import type { Runtime } from '../runtime.js';
import { RunnelError } from '../../base/errors.js';
import { NODE_RED_COMPAT_VERSION, RUNNEL_VERSION } from '../../base/version.js';

const set = (v: unknown) => (v === undefined || v === null || v === false ? 'UNSET' : 'SET');
const orUnset = (v: unknown) => (v === undefined ? 'UNSET' : v);

/** Node-RED's diagnostics report for support requests: GET /diagnostics. */
export interface DiagnosticsApi {
  /**
   * The report (`report: "diagnostics"`, `scope: "basic"`): versions, platform, flows state,
   * installed modules, settings. Secrets and where things live are only said to be SET or UNSET.
   * `diagnostics_disabled` with `diagnostics.enabled: false`.
   */
  getReport(): Record<string, unknown>;
}

export function diagnosticsApi(runtime: Runtime): DiagnosticsApi {
  const settings = runtime.settings;
  return {
    getReport: () => {
      const diagnostics = settings.extra.diagnostics as { enabled?: unknown } | undefined;
      if (diagnostics?.enabled === false) throw new RunnelError('diagnostics_disabled', 'Diagnostics are disabled (diagnostics.enabled: false)');
      const now = new Date();
      const intl = Intl.DateTimeFormat().resolvedOptions();
      const extra = settings.extra;
      const state = runtime.getState().state;
      const modules: Record<string, string> = { 'node-red': NODE_RED_COMPAT_VERSION, runnel: RUNNEL_VERSION };
      for (const mod of runtime.registry.modules.values()) if (!mod.builtin) modules[mod.name] = mod.version;
      const runtimeState = extra.runtimeState as { enabled?: unknown; ui?: unknown } | undefined;
      return {
        report: 'diagnostics',
        scope: 'basic',
        time: { utc: now.toUTCString(), local: now.toLocaleString() },
        intl: { locale: intl.locale, timeZone: intl.timeZone },
        nodejs: { version: process.version, arch: process.arch, platform: process.platform, memoryUsage: process.memoryUsage() },
        os: {
          containerised: existsSync('/.dockerenv') || existsSync('/run/.containerenv'),
          wsl: /microsoft/i.test(os.release()),
          totalmem: os.totalmem(),
          freemem: os.freemem(),
          arch: os.arch(),
          loadavg: os.loadavg(),
          platform: os.platform(),
          release: os.release(),
          type: os.type(),
          uptime: os.uptime(),
          version: os.version(),
        },
        runtime: {
          version: NODE_RED_COMPAT_VERSION,
          isStarted: true,
          flows: { state, started: state === 'start' },
          modules,
          settings: {
            available: true,
            apiMaxLength: settings.apiMaxLength,
            disableEditor: extra.disableEditor === true,
            contextStorage: Object.fromEntries(
              Object.entries(settings.contextStorage ?? {}).map(([name, store]) => [name, typeof store === 'string' ? store : { module: typeof store.module === 'string' ? store.module : 'custom' }]),
            ),
            debugMaxLength: orUnset(extra.debugMaxLength),
            flowFile: settings.flowFile,
            mqttReconnectTime: orUnset(extra.mqttReconnectTime),
            serialReconnectTime: orUnset(extra.serialReconnectTime),
            socketReconnectTime: orUnset(extra.socketReconnectTime),
            socketTimeout: orUnset(extra.socketTimeout),
            tcpMsgQueueSize: orUnset(extra.tcpMsgQueueSize),
            inboundWebSocketTimeout: orUnset(extra.inboundWebSocketTimeout),
            runtimeState: { enabled: runtimeState?.enabled === true, ui: runtimeState?.ui === true },
            adminAuth: set(settings.adminAuth),
            credentialSecret: set(settings.credentialSecret),
            httpAdminRoot: settings.httpAdminRoot,
            httpAdminCors: set(settings.httpAdminCors),
            httpNodeAuth: set(settings.httpNodeAuth),
            httpNodeRoot: settings.httpNodeRoot,
            httpNodeCors: set(settings.httpNodeCors),
            httpStatic: settings.httpStatic.length ? 'SET' : 'UNSET',
            httpStaticRoot: orUnset(extra.httpStaticRoot),
            httpStaticCors: set(extra.httpStaticCors),
            uiHost: set(settings.uiHost),
            uiPort: set(settings.uiPort),
            userDir: set(settings.userDir),
            nodesDir: settings.nodesDir.length ? 'SET' : 'UNSET',
            flowHistory: settings.flowHistory,
            metrics: { enabled: settings.metrics.enabled },
          },
        },
      };
    },
  };
}
