import type { FlowNodeConfig } from '../../storage/contract.js';

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
  /**
   * For `reload`: runs once the nodes have stopped and before the stored flows are read (a project
   * switch points storage and the credential key at the project's files here).
   */
  beforeRead?: () => Promise<void>;
}

export interface RollbackRequest {
  /** The rev of a kept revision. */
  rev: string;
  /** When given, the rollback only happens if the active rev still equals it. */
  expectedRev?: string;
  type: Exclude<DeploymentType, 'reload'>;
  user?: string;
  ip?: string;
  reqId?: string;
}

/** A deploy's dry run: the sets of node ids the deploy would stop, start and rewire in place. */
export interface DeployPreview {
  rev: string;
  type: DeploymentType;
  stop: string[];
  start: string[];
  rewire: string[];
  /** Running nodes the deploy leaves running. */
  unchanged: number;
  missingTypes: string[];
  /** Node ids whose credentials the deploy adds, changes, removes. */
  credentials: { added: string[]; changed: string[]; removed: string[] };
}

export type DeployOutcome = 'success' | 'conflict' | 'rejected' | 'error';

/** A finished deploy as the metrics see it: the rev and running node count after it. */
export type DeployObserver = (done: { type: string; outcome: DeployOutcome; seconds: number; rev: string; nodes: number; user?: string }) => void;

export interface DeployResult {
  rev: string;
  /** Ids of nodes started by this deploy (for tests and the dashboard). */
  restarted: string[];
  /** Ids of running nodes this deploy stopped. */
  stopped: string[];
}

/** A node (or tab) that cannot work as configured, as GET /flows/state lists it. */
export interface NodeErrorReport {
  id: string;
  type: string;
  z?: string;
  name?: string;
  /** What is wrong, in the node's words (or the runtime's, for a tab it stopped). */
  error: string;
}

export interface FlowsState {
  state: 'start' | 'stop' | 'safe';
  /** With shared storage (a cluster): the rev of the configuration this instance runs. */
  rev?: string;
  /** Types used by the active configuration that no loaded module provides. */
  missingTypes?: string[];
  /**
   * Nodes of the running configuration that cannot work as configured: their constructor threw,
   * or they reported an error while being built; tabs stopped for flooding the message queue.
   */
  errors?: NodeErrorReport[];
}

export type { FlowNodeConfig };
