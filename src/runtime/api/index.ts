import type { Runtime } from '../runtime.js';
import { flowsApi, type FlowsApi, type FlowsCheck } from './flows.js';
import { historyApi, type HistoryApi } from './history.js';
import { nodesApi, type NodesApi } from './nodes.js';
import { contextApi, type ContextApi } from './context.js';
import { credentialsApi, type CredentialsApi } from './credentials.js';
import { clusterApi, type ClusterApi } from './cluster.js';
import { settingsApi, type SettingsApi } from './settings.js';
import { diagnosticsApi, type DiagnosticsApi } from './diagnostics.js';
import { healthApi, type HealthApi } from './health.js';
import { commsApi, type CommsApi } from './comms.js';
import { metricsApi, type MetricsApi } from './metrics.js';
import { queuesApi, type QueuesApi } from './queues.js';
import type { QueueService } from '../../queues/queue-service.js';
import { projectsApi, type ProjectsApi } from './projects.js';
import type { Projects } from '../../projects/projects.js';

export type { Caller } from './caller.js';

/**
 * Everything the HTTP server may ask of the runtime, one group per route group. The server gets
 * this bundle, never the Runtime: what it can do to the runtime is what is declared here.
 */
export interface AdminApi {
  flows: FlowsApi;
  history: HistoryApi;
  nodes: NodesApi;
  context: ContextApi;
  credentials: CredentialsApi;
  cluster: ClusterApi;
  settings: SettingsApi;
  diagnostics: DiagnosticsApi;
  health: HealthApi;
  comms: CommsApi;
  metrics: MetricsApi;
  queues: QueuesApi;
  /** Present when Projects are on (editorTheme.projects.enabled). */
  projects?: ProjectsApi;
}

/**
 * The admin API over a runtime; `checkFlows` is the deploy body's check, applied to single-flow
 * edits too; `queues` the queue nodes' durable queues; `projects` when Projects are on.
 */
export function adminApi(runtime: Runtime, checkFlows: FlowsCheck, queues: QueueService, projects?: Projects): AdminApi {
  return {
    flows: flowsApi(runtime, checkFlows),
    history: historyApi(runtime),
    nodes: nodesApi(runtime),
    context: contextApi(runtime),
    credentials: credentialsApi(runtime),
    cluster: clusterApi(runtime),
    settings: settingsApi(runtime),
    diagnostics: diagnosticsApi(runtime),
    health: healthApi(runtime),
    comms: commsApi(runtime),
    metrics: metricsApi(runtime, queues),
    queues: queuesApi(queues, runtime.log),
    ...(projects ? { projects: projectsApi(runtime, projects) } : {}),
  };
}
