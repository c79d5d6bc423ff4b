import { login, timedDeploy, deployBody, type DeployTiming } from '../admin-client.js';
import { benchConfig, type BenchConfig } from '../flows.js';
import type { CannonResult } from '../load-jobs.js';
import type { RunningSystem } from '../systems.js';
import type { ScenarioContext } from './types.js';

export const PROBE_PATH = 'bench/probe';
/** Upper bound for one deploy to start serving (Node-RED needs seconds for 10,000 nodes). */
export const DEPLOY_TIMEOUT_MS = 300_000;

export function adminToken(system: RunningSystem, ctx: ScenarioContext): Promise<string> {
  return login(system.base, ctx.env.users.admin, ctx.env.users.password);
}

/** A full deploy of `config`, resolved once its probe answers `probeBody`. */
export function deployServing(system: RunningSystem, token: string, config: BenchConfig, probeBody: string): Promise<DeployTiming> {
  return timedDeploy(
    system.base, token, deployBody(config.flows), 'full', system.base + PROBE_PATH, probeBody, DEPLOY_TIMEOUT_MS,
  );
}

export function bigConfig(ctx: ScenarioContext, probeBody: string): BenchConfig {
  return benchConfig(ctx.opts.bigNodes, `/${PROBE_PATH}`, probeBody);
}

/** Load results with failed requests are still reported, but never silently. */
export function checkCannon(result: CannonResult, what: string, ctx: ScenarioContext): CannonResult {
  if (result.ok === 0) throw new Error(`${what}: no successful response`);
  const bad = { non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts, mismatches: result.mismatches };
  if (Object.values(bad).some((n) => n > 0)) ctx.log(`  warning: ${what}: ${JSON.stringify(bad)} besides ${result.ok} good answers`);
  return result;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
