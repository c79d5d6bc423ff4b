import type { Settings } from '../settings/settings.js';
import type { Logger } from '../base/log.js';
import type { Storage } from '../storage/contract.js';
import type { AuthService } from '../auth/types.js';
import type { Runtime } from '../runtime/runtime.js';
import type { HttpNodeApp } from './http-node/app.js';
import type { Metrics } from './metrics/metrics.js';

/** Everything a route plugin may use. Built once by the composition root (src/runnel.ts). */
export interface Services {
  settings: Settings;
  log: Logger;
  storage: Storage;
  auth: AuthService;
  runtime: Runtime;
  /** The router behind http-in nodes and RED.httpNode. */
  httpNode: HttpNodeApp;
  /** RED.httpAdmin: routes contributed modules add under httpAdminRoot. */
  httpAdmin: HttpNodeApp;
  /** Present when `metrics.enabled`. */
  metrics?: Metrics;
}
