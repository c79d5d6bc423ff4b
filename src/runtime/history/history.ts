import { RunnelError } from '../../base/errors.js';
import type { FlowNodeConfig, Revision, RevisionInfo, Storage } from '../../storage/contract.js';
import { compareConfigs, type NodeChange } from './compare.js';

/** Reading the revision history: pages of revisions, one revision's flows, the difference of two. */
export class History {
  constructor(private readonly storage: Storage) {}

  /** Newest first; `next` is the cursor (`before`) of the following page, absent on the last. */
  async page(limit: number, before?: number): Promise<{ revisions: RevisionInfo[]; next?: number }> {
    const rows = await this.storage.listRevisions({ limit: limit + 1, ...(before === undefined ? {} : { before }) });
    const revisions = rows.slice(0, limit);
    return rows.length > limit ? { revisions, next: revisions[revisions.length - 1].seq } : { revisions };
  }

  /** A revision's description and flows; never its credentials. */
  async flows(rev: string): Promise<RevisionInfo & { flows: FlowNodeConfig[] }> {
    const { credentials: _, ...revision } = await this.find(rev);
    return revision;
  }

  async diff(rev: string, to: string): Promise<{ from: string; to: string; changes: NodeChange[] }> {
    const [a, b] = await Promise.all([this.find(rev), this.find(to)]);
    return { from: a.rev, to: b.rev, changes: compareConfigs(a.flows, b.flows) };
  }

  private async find(rev: string): Promise<Revision> {
    const revision = await this.storage.getRevision({ rev });
    if (revision === undefined) throw new RunnelError('not_found', `No kept revision has rev ${rev}`);
    return revision;
  }
}
