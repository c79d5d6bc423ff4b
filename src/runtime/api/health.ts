import type { Runtime } from '../runtime.js';

/** Past this, a deploy under way makes the instance not ready. */
const DEPLOY_BOUND_MS = 30_000;
const STORAGE_BOUND_MS = 5_000;

/** What orchestrators' probes ask: GET /health/ready. */
export interface HealthApi {
  /**
   * Why this instance should not take traffic — storage does not answer (within 5 s), the flows
   * are not started, a deploy has been running over 30 s — or undefined when it is ready.
   */
  readinessProblem(): Promise<string | undefined>;
}

export function healthApi(runtime: Runtime): HealthApi {
  return {
    readinessProblem: async () => {
      if (runtime.getState().state !== 'start') return 'flows are not started';
      const since = runtime.deployingSince;
      if (since !== undefined && Date.now() - since > DEPLOY_BOUND_MS) return 'a deploy has been running too long';
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('storage did not answer in time'), STORAGE_BOUND_MS);
      });
      try {
        return await Promise.race([runtime.storage.getRuntimeConfig().then(() => undefined, () => 'storage is unreachable'), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
