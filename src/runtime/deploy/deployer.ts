import { performance } from 'node:perf_hooks';
import type { FlowNodeConfig, RevisionMeta } from '../../storage/contract.js';
import { RunnelError } from '../../base/errors.js';
import type { CredentialPlan } from '../../credentials/store.js';
import { planDeploy } from '../config/plan.js';
import { summarise, type NodeTexts } from '../history/compare.js';
import { FlowsPart, type FlowsDeps } from './flows-part.js';
import type { DeployObserver, DeployOutcome, DeployPreview, DeployRequest, DeployResult, RollbackRequest } from '../config/deploy-types.js';

/**
 * The deploy pipeline: deploys, single-flow edits, rollbacks and reloads, each run in the deploy
 * lock, saved, then applied to the running flows; a preview plans a deploy the same way and
 * changes nothing.
 */
export class Deployer extends FlowsPart {
  private deployStarted: number | undefined;
  private readonly deployObservers: DeployObserver[] = [];

  constructor(
    deps: FlowsDeps,
    /** The running nodes by id. */
    private readonly nodes: ReadonlyMap<string, unknown>,
    /** Applies the configuration another instance saved; called from inside the deploy lock. */
    private readonly followStored: () => Promise<void>,
  ) {
    super(deps);
  }

  /** Applies a deploy. Resolves after the new configuration is saved and its nodes have started. */
  deploy(req: DeployRequest): Promise<DeployResult> {
    return this.exclusive(req.type, async () => {
      if (req.type === 'reload') return this.reload(req);
      this.checkRev(req.rev);
      try {
        return await this.replace(req, this.credentials.store.plan(req.flows, req.credentials), { action: 'deploy' });
      } catch (e) {
        // Another instance deployed first and this one has not applied it yet: a deploy without
        // a rev means "replace whatever is there", so catch up and deploy on top of it.
        if (!(this.storage.shared && req.rev === undefined && (e as RunnelError).code === 'version_mismatch')) throw e;
        await this.followStored();
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
  private exclusive(type: string, run: () => Promise<DeployResult>): Promise<DeployResult> {
    return this.mutex.run(async () => {
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
        for (const observer of this.deployObservers) observer({ type, outcome, seconds, rev: this.state.active.rev, nodes: this.nodes.size });
      }
    });
  }

  /**
   * A deploy computed from the active configuration inside the deploy lock, so a concurrent deploy
   * cannot slip in between reading and writing (the single-flow API edits one tab this way).
   */
  editFlows(change: (flows: FlowNodeConfig[]) => FlowNodeConfig[], req: Omit<DeployRequest, 'flows' | 'rev'>): Promise<DeployResult> {
    return this.exclusive(req.type, async () => {
      const flows = change(structuredClone(this.state.active.flows));
      return this.replace({ ...req, flows }, this.credentials.store.plan(flows), { action: 'deploy' });
    });
  }

  /** Deploys a kept revision (flows and its credentials) as a new revision. */
  rollback(req: RollbackRequest): Promise<DeployResult> {
    return this.exclusive(req.type, async () => {
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
    const next = planDeploy(old.parsed, plan.flows, plan.changedNodes, type, this.registry.isKnownType, this.state.view);
    const sets = this.flowSet.preview(next.parsed, next.stop);
    const stopping = new Set(sets.stop);
    return {
      rev: next.rev,
      type: req.type,
      stop: sets.stop,
      // Stopped flows (POST /flows/state) stay stopped: a deploy starts nothing.
      start: this.state.started ? sets.start : [],
      rewire: [...next.rewired].filter((id) => !stopping.has(id) && this.nodes.has(id)),
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
    const next = planDeploy(old.parsed, plan.flows, plan.changedNodes, type, this.registry.isKnownType, this.state.view);
    const doc = plan.changed || this.credentials.store.needsSave ? await this.credentials.store.serialise(plan.credentials) : null;
    const texts = old.parsed.text && next.parsed.text ? { before: old.parsed.text, after: next.parsed.text } : undefined;
    const meta: RevisionMeta = { ...revision, ...this.revisionMeta(req, old.flows, plan.flows, texts), type };
    const { rev } = await this.storage.saveFlows({ flows: plan.flows, credentials: doc, expectedRev: old.rev, json: next.json, bytes: next.bytes, rev: next.rev, revision: meta, type });
    this.credentials.store.commit(plan.credentials);
    await this.credentials.store.saved(doc);
    this.credentials.unreadable = false;
    this.state.active = { flows: plan.flows, parsed: next.parsed, rev, json: next.json };
    // Flows stopped through POST /flows/state: the deploy is saved, not started.
    let stopped: string[] = [];
    let restarted: string[] = [];
    if (this.state.safeMode) {
      // As in Node-RED, a deploy of any type leaves safe mode and starts everything.
      this.state.safeMode = false;
      ({ started: restarted } = await this.transition.during(() => this.startAll(next.parsed)));
      this.state.started = true;
    } else if (this.state.started) {
      ({ stopped, started: restarted } = await this.applyPlan(next));
    }
    const event = revision.action === 'rollback' ? 'flows.rollback' : 'flows.set';
    this.log.audit({ event, user: req.user, ip: req.ip, reqId: req.reqId, type: req.type, rev: { old: old.rev, new: rev } }, `flows ${revision.action === 'rollback' ? 'rolled back' : 'deployed'}`);
    this.notices.emitStarted(next.type, next.diff, true);
    this.events.emit('runtime-event', { id: 'runtime-deploy', payload: { revision: rev }, retain: true });
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
  private reload(req: DeployRequest): Promise<DeployResult> {
    return this.transition.during(() => this.reloadFlows(req));
  }

  private async reloadFlows(req: DeployRequest): Promise<DeployResult> {
    const old = this.state.active.rev;
    await this.stopAll(true);
    const before = this.state.active.flows;
    await this.loadFromStorage();
    await this.storage.recordRevision({ action: 'reload', type: 'reload', ...this.revisionMeta(req, before, this.state.active.flows) });
    let stopped: string[] = [];
    let restarted: string[] = [];
    if (this.state.safeMode) {
      this.state.safeMode = false;
      this.state.started = true;
    }
    if (this.state.started) {
      ({ stopped, started: restarted } = await this.startAll(this.state.active.parsed));
    }
    this.log.audit({ event: 'flows.set', user: req.user, ip: req.ip, reqId: req.reqId, type: 'reload', rev: { old, new: this.state.active.rev } }, 'flows reloaded');
    this.notices.emitStarted('full', undefined, true);
    this.events.emit('runtime-event', { id: 'runtime-deploy', payload: { revision: this.state.active.rev }, retain: true });
    return { rev: this.state.active.rev, restarted, stopped };
  }

  /** Makes the stored configuration and its credentials the active ones, without starting them (at start, and in a reload). */
  async loadFromStorage(atStart = false): Promise<void> {
    const snapshot = await this.storage.getFlows();
    if (snapshot.recovered) this.log.warn({ recovered: snapshot.recovered }, 'storage repaired an interrupted save');
    await this.credentials.load(snapshot.credentials, atStart);
    this.state.active = { flows: snapshot.flows, parsed: this.state.parse(snapshot.flows), rev: snapshot.rev };
  }
}
