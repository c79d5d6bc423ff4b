import type { Runtime } from '../runtime.js';
import type { FlowNodeConfig, RevisionInfo } from '../../storage/contract.js';
import type { DeploymentType } from '../config/deploy-types.js';
import type { NodeChange } from '../history/compare.js';
import type { Caller } from './caller.js';

export type { NodeChange, RevisionInfo };

/** The revision history: /flows/history, /flows/history/:rev, its diff, /flows/rollback. */
export interface HistoryApi {
  /** Revisions newest first, `limit` of them before the cursor `before`; `next` is the following page's cursor. */
  listRevisions(limit: number, before?: number): Promise<{ revisions: RevisionInfo[]; next?: number }>;
  /** A kept revision's description and flows, never its credentials; `not_found` for an unknown rev. */
  getRevision(rev: string): Promise<RevisionInfo & { flows: FlowNodeConfig[] }>;
  /** Node by node, what changed from the revision `rev` to the revision `to`. */
  diff(rev: string, to: string): Promise<{ from: string; to: string; changes: NodeChange[] }>;
  /**
   * Deploys a kept revision, flows and credentials, as a new revision; audited. `expectedRev`, when
   * given, must still be the active rev.
   */
  rollback(target: { rev: string; expectedRev?: string; type: Exclude<DeploymentType, 'reload'> }, caller: Caller): Promise<{ rev: string }>;
}

export function historyApi(runtime: Runtime): HistoryApi {
  return {
    listRevisions: (limit, before) => runtime.history.page(limit, before),
    getRevision: (rev) => runtime.history.flows(rev),
    diff: (rev, to) => runtime.history.diff(rev, to),
    rollback: async (target, caller) => ({ rev: (await runtime.rollback({ ...target, ...caller })).rev }),
  };
}
