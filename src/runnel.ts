import type { Settings } from './settings/settings.js';
import { logExtensions } from './settings/logging.js';
import { createLogger, type Logger } from './base/log.js';
import type { DestinationStream } from 'pino';
import { createStorage } from './storage/index.js';
import { createAuthService, type EditorLogin } from './auth/service.js';
import { EDITOR_LOGIN } from './server/editor/editor-routes.js';
import { Runtime } from './runtime/runtime.js';
import { adminApi } from './runtime/api/index.js';
import { validateFlows } from './server/flows-validation.js';
import { CORE_NODES } from './nodes/index.js';
import { primaryOnlyScopes } from './runtime/config/primary-only.js';
import { queueNodes } from './nodes/queue/queue.js';
import { QueueService } from './queues/queue-service.js';
import { buildApp } from './server/app.js';
import { createHttpNodeApp, createAdminRouteApp } from './server/http-node/mounted-app.js';
import type { Storage } from './storage/contract.js';
import type { Server } from 'node:http';
import { startMetricsListener } from './server/metrics/routes.js';
import { refreshTls, resolveTls } from './server/http-security/tls.js';
import type { Server as HttpsServer } from 'node:https';
import { MemoryTrimmer } from './base/memory-trim.js';
import type { Clock } from './base/clock.js';
import { openProjects, projectKey } from './projects/start.js';

export interface RunnelOptions {
  /** Log destination (tests capture logs to scan them). Defaults to stdout. */
  logDestination?: DestinationStream;
  /** Alternative storage backend; the file backend in userDir by default. */
  storage?: Storage;
  /** Called with the URL once the server listens, which is before the flows have started. */
  onListening?: (url: string) => void;
  /** Called once, before the first code of an installed module or of a flow's nodes runs. */
  beforeForeignCode?: () => void;
  /** The clock of session expiry, login throttling and automatic module installs' retries (the system's by default); tests move a fake one. */
  clock?: Clock;
  /** How the editor takes a strategy login: the served editor's way by default; tests of the other editor's way set it. */
  editorLogin?: EditorLogin;
}

export interface RunnelInstance {
  url: string;
  settings: Settings;
  log: Logger;
  runtime: Runtime;
  app: Awaited<ReturnType<typeof buildApp>>;
  /** The separate metrics listener's URL, when `metrics.port` is set. */
  metricsUrl?: string;
  /** Stops accepting connections, lets in-flight requests finish, closes nodes, flushes storage. */
  stop(): Promise<void>;
}

/**
 * The composition root: builds every layer, loads modules and flows, listens, then starts the
 * flows — so the admin API and /health answer during a long start, /health/ready says not yet,
 * and http-in requests wait for their routes (httpNodeRouteWait). Resolves once the flows started.
 */
export async function startRunnel(settings: Settings, options: RunnelOptions = {}): Promise<RunnelInstance> {
  const log = createLogger(settings.logging.level, options.logDestination, settings.logging.format, logExtensions(settings.logging));
  const tls = await resolveTls(settings);
  const storage = options.storage ?? (await createStorage(settings, log));
  await storage.init();
  const auth = await createAuthService({ settings, storage, log, clock: options.clock, editorLogin: options.editorLogin ?? EDITOR_LOGIN });
  const httpNode = createHttpNodeApp(settings, log);
  const httpAdmin = createAdminRouteApp(settings, log);
  const queues = new QueueService(storage.queues, settings.queues, log.child({ module: 'queues' }));
  // Nodes run only once the runtime below exists.
  const onPrimaryOnlyTab = primaryOnlyScopes(() => runtime.getFlows().flows);
  const builtinNodes = { ...CORE_NODES, sets: { ...CORE_NODES.sets, queue: queueNodes(queues, onPrimaryOnlyTab) } };
  const projects = await openProjects(settings, storage);
  const runtime = new Runtime({
    settings, log, storage, httpNode, httpAdmin, auth, builtinNodes, beforeForeignCode: options.beforeForeignCode, clock: options.clock,
    // With shared storage the database keeps the credentials under the cluster's key; the project's files under its own.
    ...(projects && !storage.shared ? { credentialKey: () => projectKey(projects) } : {}),
  });
  // A single-flow edit's result passes the checks a deploy body passes.
  const admin = adminApi(runtime, validateFlows, queues, projects);
  // prom-client costs ~13 MiB resident: loaded only when metrics are on.
  const metrics = settings.metrics.enabled ? new (await import('./server/metrics/metrics.js')).Metrics(admin.metrics, settings.httpNodeRoot) : undefined;
  if (settings.unsupported.length > 0) log.warn(`Settings Runnel does not support (ignored): ${settings.unsupported.join(', ')}`);
  const app = await buildApp({ settings, log, storage, auth, admin, httpNode, httpAdmin, metrics }, { tls });
  const tlsServers = [app.server as unknown as HttpsServer];
  const stopTlsRefresh = tls ? refreshTls(tlsServers, settings, tls, log) : () => {};
  runtime.attachServer(app.server);
  await runtime.load();
  let metricsServer: Server | undefined;
  const host = settings.uiHost.includes(':') ? `[${settings.uiHost}]` : settings.uiHost;
  let url = '';
  try {
    await app.listen({ port: settings.uiPort, host: settings.uiHost });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : settings.uiPort;
    url = `${tls ? 'https' : 'http'}://${host}:${port}${settings.httpAdminRoot === '/' ? '/' : `${settings.httpAdminRoot}/`}`;
    options.onListening?.(url);
    await runtime.start();
    if (metrics && settings.metrics.port !== undefined) {
      metricsServer = await startMetricsListener(metrics, { settings, auth, host: settings.uiHost, port: settings.metrics.port, tls });
      if (tls) tlsServers.push(metricsServer as unknown as HttpsServer);
    }
  } catch (e) {
    stopTlsRefresh();
    await app.close();
    await runtime.stop();
    await auth.close();
    await storage.close();
    throw e;
  }
  const trimmer = new MemoryTrimmer();
  trimmer.schedule();
  runtime.observeDeploys(() => trimmer.schedule());
  let stopping: Promise<void> | undefined;
  const metricsAddress = metricsServer?.address();
  return {
    url,
    ...(typeof metricsAddress === 'object' && metricsAddress ? { metricsUrl: `${tls ? 'https' : 'http'}://${host}:${metricsAddress.port}/metrics` } : {}),
    settings,
    log,
    runtime,
    app,
    stop: () =>
      (stopping ??= (async () => {
        stopTlsRefresh();
        trimmer.stop();
        await app.close();
        if (metricsServer) await new Promise((resolve) => metricsServer.close(resolve));
        await runtime.stop();
        await auth.close();
        await storage.close();
        log.flush();
      })()),
  };
}
