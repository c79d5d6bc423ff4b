import type { Runtime } from '../runtime.js';
import type { InstanceRecord } from '../../storage/contract.js';

export type { InstanceRecord };

/** The instances sharing this one's database: GET /cluster. */
export interface ClusterApi {
  /** The live instances from their heartbeats (just this one without shared storage). */
  getInstances(): Promise<InstanceRecord[]>;
}

export function clusterApi(runtime: Runtime): ClusterApi {
  return { getInstances: () => runtime.clusterView() };
}
