import type { Runtime } from '../runtime.js';
import type { DeployObserver } from '../config/deploy-types.js';
import type { TypeCounters } from '../flows/stats.js';
import type { QueueInfo, QueueService } from '../../queues/queue-service.js';

export type { DeployObserver, TypeCounters };

/** What the Prometheus metrics read of the runtime at scrape time, and the deploys they count. */
export interface MetricsApi {
  /** Calls `observer` after every deploy, rollback and single-flow edit with its outcome and duration. */
  observeDeploys(observer: DeployObserver): void;
  /** The active configuration's rev. */
  rev(): string;
  /** Nodes running now. */
  nodeCount(): number;
  /** Messages waiting for delivery. */
  queueDepth(): number;
  /** Modules installed (not built in). */
  installedModuleCount(): number;
  /** Messages sent and received and errors reported, by node type, since the start. */
  messageCounts(): Iterable<[type: string, counts: TypeCounters]>;
  /** The queue nodes' durable queues, as GET /queues lists them. */
  queues(): Promise<QueueInfo[]>;
}

export function metricsApi(runtime: Runtime, queues: QueueService): MetricsApi {
  const services = runtime.services;
  return {
    observeDeploys: (observer) => runtime.observeDeploys(observer),
    rev: () => runtime.rev,
    nodeCount: () => services.nodes.size,
    queueDepth: () => services.queue.depth,
    installedModuleCount: () => [...services.registry.modules.values()].filter((m) => !m.builtin).length,
    messageCounts: () => services.stats.entries(),
    queues: () => queues.list(),
  };
}
