import type { FlowNodeConfig } from '../storage/types.js';

export type DeploymentType = 'full' | 'nodes' | 'flows' | 'reload';
export const DEPLOYMENT_TYPES: readonly DeploymentType[] = ['full', 'nodes', 'flows', 'reload'];

export interface DeployRequest {
  /** Ignored for `reload`. Nodes may carry inline `credentials`. */
  flows: FlowNodeConfig[];
  /** Top-level credentials: a map by node id, or `{"$": "<encrypted>"}`. */
  credentials?: Record<string, unknown>;
  /** When given, the deploy only happens if the active rev still equals it. */
  rev?: string;
  type: DeploymentType;
  /** For the audit log: who asked, from where, in which request. */
  user?: string;
  ip?: string;
  reqId?: string;
}

export interface DeployResult {
  rev: string;
  /** Ids of nodes stopped and started by this deploy (for tests and the dashboard). */
  restarted: string[];
}

export interface NodeErrorReport {
  id: string;
  type: string;
  z?: string;
  error: string;
}

export interface FlowsState {
  state: 'start' | 'stop';
  /** With shared storage (a cluster): the rev of the configuration this instance runs. */
  rev?: string;
  /** Types used by the active configuration that no loaded module provides. */
  missingTypes?: string[];
  /** Nodes whose constructor threw during the last start. */
  errors?: NodeErrorReport[];
}

export type { FlowNodeConfig };
