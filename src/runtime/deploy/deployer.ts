import { performance } from 'node:perf_hooks';
import type { FlowNodeConfig, RevisionMeta, Storage } from '../../storage/contract.js';
import { RunnelError } from '../../base/errors.js';
import type { CredentialPlan } from '../../credentials/store.js';
import { planDeploy } from '../config/plan.js';
import { summarise, type NodeTexts } from '../history/compare.js';
import type { Logger } from '../../base/log.js';
import type { Registry } from '../../registry/registry.js';
import type { FlowSet } from '../flows/flow-set.js';
import type { RunState } from './run-state.js';
import type { RuntimeCredentials } from './credentials.js';
import type { ActiveFlows, StoredConfig } from './active-flows.js';
import type { DeployObserver, DeployOutcome, DeployPreview, DeployRequest, DeployResult, RollbackRequest } from '../config/deploy-types.js';

export interface DeployerDeps {
  active: ActiveFlows;
  state: RunState;
  storage: Storage;
  log: Logger;
  registry: Pick<Registry, 'isKnownType'>;
  credentials: RuntimeCredentials;
  /** A preview asks what a deploy would stop and start. */
  flowSet: Pick<FlowSet, 'preview'>;
  /** The running nodes by id. */
  nodes: ReadonlyMap<string, unknown>;
  /** Applies the configuration another instance saved; called from inside the deploy lock. */
  followStored: () => Promise<void>;
}

/**
 * The deploy pipeline: deploys, single-flow edits, rollbacks and reloads, each run in the deploy
 * lock, saved, then applied to the running flows; a preview plans a deploy the same way and
 * changes nothing.
 */
export class Deployer {
  private deployStarted: number | undefined;
  private readonly deployObservers: DeployObserver[] = [];
  private readonly active: ActiveFlows;
  private readonly state: RunState;
  private readonly storage: Storage;
  private readonly log: Logger;
  private readonly credentials: RuntimeCredentials;

  constructor(private readonly deps: DeployerDeps) {
    ({ active: this.active, state: this.state, storage: this.storage, log: this.log, credentials: this.credentials } = deps);
  }

  /** Applies a deploy. Resolves after the new configuration is saved and its nodes have started. */
  deploy(req: DeployRequest): Promise<DeployResult> {
    return this.exclusive(req, async () => {
      if (req.type === 'reload') return this.reload(req);
      this.checkRev(req.rev);
      try {
        return await this.replace(req, this.credentials.store.plan(req.flows, req.credentials), { action: 'deploy' });
      } catch (e) {
        // Another instance deployed first and this one has not applied it yet: a deploy without
        // a rev means "replace whatever is there", so catch up and deploy on top of it.
        if (!(this.storage.shared && req.rev === undefined && (e as RunnelError).code === 'version_mismatch')) throw e;
        await this.deps.followStored();
        return this.replace(req, this.credentials.store.plan(req.flows, req.credentials), { action: 'deploy' });
      }
    });
  }

  /** Since when (epoch ms) the deploy under way has been running; undefined when none is. */
  get deployingSince(): number | undefined {
    return this.deployStarted;
  }

  /** Called after every deploy, rollback and single-flow edit with its outcome and duration. */
  observeDeploys(observer: DeployObserver): void {
    this.deployObservers.push(observer);
  }

  /** Runs a deploy inside the deploy lock, timing it and reporting its outcome. */
  private exclusive({ type, user }: { type: string; user?: string }, run: () => Promise<DeployResult>): Promise<DeployResult> {
    return this.active.exclusive(async () => {
      const started = performance.now();
      this.deployStarted = Date.now();
      let outcome: DeployOutcome = 'error';
      try {
        const result = await run();
        outcome = 'success';
        return result;
      } catch (e) {
        if (e instanceof RunnelError) outcome = e.status === 409 ? 'conflict' : e.status < 500 ? 'rejected' : 'error';
        throw e;
      } finally {
        this.deployStarted = undefined;
        const seconds = (performance.now() - started) / 1000;
        for (const observer of this.deployObservers) observer({ type, outcome, seconds, rev: this.state.active.rev, nodes: this.deps.nodes.size, user });
      }
    });
  }

  /**
   * A deploy computed from the active configuration inside the deploy lock, so a concurrent deploy
   * cannot slip in between reading and writing (the single-flow API edits one tab this way).
   */
  editFlows(change: (flows: FlowNodeConfig[]) => FlowNodeConfig[], req: Omit<DeployRequest, 'flows' | 'rev'>): Promise<DeployResult> {
    return this.exclusive(req, async () => {
      const flows = change(structuredClone(this.state.active.flows));
      return this.replace({ ...req, flows }, this.credentials.store.plan(flows), { action: 'deploy' });
    });
  }

  /** Deploys a kept revision (flows and its credentials) as a new revision. */
  rollback(req: RollbackRequest): Promise<DeployResult> {
    return this.exclusive(req, async () => {
      this.checkRev(req.expectedRev);
      const target = await this.storage.getRevision({ rev: req.rev });
      if (target === undefined) throw new RunnelError('not_found', `No kept revision has rev ${req.rev}`);
      const plan = await this.credentials.store.planRestore(target.flows, target.credentials);
      return this.replace({ ...req, flows: target.flows }, plan, { action: 'rollback', restoredSeq: target.seq });
    });
  }

  /** What a deploy of `req` would do, computed by the deploy's own planning; changes nothing. */
  async preview(req: DeployRequest): Promise<DeployPreview> {
    this.checkRev(req.rev);
    const old = this.state.active;
    const type = req.type === 'reload' ? 'full' : req.type;
    const source = req.type === 'reload' ? await this.storage.getFlows() : undefined;
    const plan = source ? await this.credentials.store.planRestore(source.flows, source.credentials) : this.credentials.store.plan(req.flows, req.credentials);
    const next = planDeploy(old.parsed, plan.flows, plan.changedNodes, type, this.deps.registry.isKnownType, this.state.view);
    const sets = this.deps.flowSet.preview(next.parsed, next.stop);
    const stopping = new Set(sets.stop);
    return {
      rev: next.rev,
      type: req.type,
      stop: sets.stop,
      // Stopped flows (POST /flows/state) stay stopped: a deploy starts nothing.
      start: this.state.started ? sets.start : [],
      rewire: [...next.rewired].filter((id) => !stopping.has(id) && this.deps.nodes.has(id)),
      unchanged: sets.running,
      missingTypes: [...next.parsed.missingTypes],
      credentials: this.credentials.store.compare(plan.credentials),
    };
  }

  private checkRev(rev: string | undefined): void {
    if (rev !== undefined && rev !== this.state.active.rev) {
      throw new RunnelError('version_mismatch', `The flows have changed: rev ${rev} is not the active rev`);
    }
  }

  private async replace(req: DeployRequest, plan: CredentialPlan, revision: Pick<RevisionMeta, 'action' | 'restoredSeq'>): Promise<DeployResult> {
    const old = this.state.active;
    const type = req.type === 'reload' ? 'full' : req.type;
    const next = planDeploy(old.parsed, plan.flows, plan.changedNodes, type, this.deps.registry.isKnownType, this.state.view);
    const doc = plan.changed || this.credentials.store.needsSave ? await this.credentials.store.serialise(plan.credentials) : null;
    const texts = old.parsed.text && next.parsed.text ? { before: old.parsed.text, after: next.parsed.text } : undefined;
    const meta: RevisionMeta = { ...revision, ...this.revisionMeta(req, old.flows, plan.flows, texts), type };
    const { rev } = await this.storage.saveFlows({ flows: plan.flows, credentials: doc, expectedRev: old.rev, json: next.json, bytes: next.bytes, rev: next.rev, revision: meta, type });
    this.credentials.store.commit(plan.credentials);
    await this.credentials.store.saved(doc);
    this.credentials.unreadable = false;
    const { stopped, started: restarted } = await this.active.activate(next, rev);
    const event = revision.action === 'rollback' ? 'flows.rollback' : 'flows.set';
    this.log.audit({ event, user: req.user, ip: req.ip, reqId: req.reqId, type: req.type, rev: { old: old.rev, new: rev } }, `flows ${revision.action === 'rollback' ? 'rolled back' : 'deployed'}`);
    return { rev, restarted, stopped };
  }

  private revisionMeta(req: DeployRequest, before: FlowNodeConfig[], after: FlowNodeConfig[], texts?: NodeTexts) {
    return {
      time: Date.now(),
      ...(req.user === undefined ? {} : { user: req.user }),
      nodeCount: after.length,
      summary: summarise(before, after, texts),
    };
  }

  /** Re-reads flows and credentials from storage and restarts everything. */
  private async reload(req: DeployRequest): Promise<DeployResult> {
    const old = this.state.active;
    const { stopped, started: restarted } = await this.active.reload(async () => {
      await req.beforeRead?.();
      const stored = await this.readStored();
      await this.storage.recordRevision({ action: 'reload', type: 'reload', ...this.revisionMeta(req, old.flows, stored.flows) });
      return stored;
    });
    this.log.audit({ event: 'flows.set', user: req.user, ip: req.ip, reqId: req.reqId, type: 'reload', rev: { old: old.rev, new: this.state.active.rev } }, 'flows reloaded');
    return { rev: this.state.active.rev, restarted, stopped };
  }

  /** The stored configuration, its credentials loaded (at start, and in a reload). */
  async readStored(atStart = false): Promise<StoredConfig> {
    const snapshot = await this.storage.getFlows();
    if (snapshot.recovered) this.log.warn({ recovered: snapshot.recovered }, 'storage repaired an interrupted save');
    await this.credentials.load(snapshot.credentials, atStart);
    return { flows: snapshot.flows, rev: snapshot.rev };
  }
}
