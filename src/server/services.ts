import type { Settings } from '../settings/settings.js';
import type { Logger } from '../base/log.js';
import type { Storage } from '../storage/contract.js';
import type { AuthService } from '../auth/types.js';
import type { AdminApi } from '../runtime/api/index.js';
import type { HttpNodeApp } from './http-node/types.js';
import type { Metrics } from './metrics/metrics.js';

/** Everything a route plugin may use. Built once by the composition root (src/runnel.ts). */
export interface Services {
  settings: Settings;
  log: Logger;
  storage: Storage;
  auth: AuthService;
  /** What the routes may ask of the runtime. */
  admin: AdminApi;
  /** The router behind http-in nodes and RED.httpNode. */
  httpNode: HttpNodeApp;
  /** RED.httpAdmin: routes contributed modules add under httpAdminRoot. */
  httpAdmin: HttpNodeApp;
  /** Present when `metrics.enabled`. */
  metrics?: Metrics;
}
