import { deployBody, timedDeploy, type DeployTiming } from '../admin-client.js';
import { benchConfig, withProbeBody } from '../flows.js';
import { NotServingError } from '../poll.js';
import { peakRssMiB, rssMiB, type RunningSystem } from '../systems.js';
import { adminToken, deployServing, DEPLOY_TIMEOUT_MS, PROBE_PATH, sleep } from './common.js';
import { RoundCutOff, type Scenario } from './types.js';

/** Time for deploy garbage to be collected before reading memory. */
const SETTLE_MS = 3000;

/**
 * A deploy not serving within DEPLOY_TIMEOUT_MS (5 min) ends the round as a result — the system's
 * cells say so, with its peak RSS and what was measured before — rather than as a harness failure.
 */
async function orCutOff(system: RunningSystem, deploy: Promise<DeployTiming>, before: Record<string, number>): Promise<DeployTiming> {
  try {
    return await deploy;
  } catch (e) {
    if (!(e instanceof NotServingError)) throw e;
    const cut = new RoundCutOff(e.brief, { ...before, peak: await peakRssMiB(system.pid) });
    cut.cause = e;
    throw cut;
  }
}

/** The sizes of the scale curve (issue goals: linear growth; 100,000 nodes serve in < 2 s, < 1 GiB, 1-node redeploy < 0.25 s). */
export const SCALE_SIZES = [1000, 10_000, 50_000, 100_000];

/**
 * scale-N: one point of the scale curve on a fresh system — a full deploy of N nodes until
 * serving, the memory it settles at and its peak, then a `nodes` deploy changing one function
 * node until the change is observable. Per-node figures make linearity visible across sizes.
 */
export function scaleScenario(nodes: number): Scenario {
  const large = nodes >= 100_000;
  return {
    name: `scale-${nodes}`,
    description: `full deploy of ${nodes} nodes until serving, RSS settled and peak, then a nodes deploy changing 1 of them`,
    // The floor (bare-deploy.ts) parses, serialises, hashes and durably stores the same deploys.
    systems: ['runnel', 'node-red', 'bare'],
    bareScript: 'bare-deploy.js',
    metrics: [
      { key: 'serve', label: 'full deploy until serving', unit: 'ms', digits: 0, vsCeiling: true, goals: large ? [{ kind: 'absolute', op: '<', value: 2000 }] : undefined },
      { key: 'msPerKNode', label: 'full deploy per 1,000 nodes', unit: 'ms', digits: 1 },
      { key: 'rss', label: 'RSS settled', unit: 'MiB', digits: 0, goals: large ? [{ kind: 'absolute', op: '<', value: 1024 }] : undefined },
      { key: 'peak', label: 'RSS peak', unit: 'MiB', digits: 0 },
      { key: 'kibPerNode', label: 'RSS per node', unit: 'KiB', digits: 2 },
      { key: 'redeploy', label: 'nodes deploy of 1 node until serving', unit: 'ms', digits: 0, vsCeiling: true, goals: large ? [{ kind: 'absolute', op: '<', value: 250 }] : undefined },
    ],
    async measure(system, ctx) {
      const idle = await rssMiB(system.pid);
      const token = await adminToken(system, ctx);
      const config = benchConfig(nodes, `/${PROBE_PATH}`, 'v1');
      const t = await orCutOff(system, deployServing(system, token, config, 'v1'), {});
      await sleep(SETTLE_MS);
      const rss = await rssMiB(system.pid);
      const full = {
        serve: t.serveMs,
        msPerKNode: (t.serveMs / nodes) * 1000,
        rss,
        peak: await peakRssMiB(system.pid),
        kibPerNode: ((rss - idle) * 1024) / nodes,
      };
      const body = deployBody(withProbeBody(config, 'v2'));
      const again = await orCutOff(system, timedDeploy(system.base, token, body, 'nodes', system.base + PROBE_PATH, 'v2', DEPLOY_TIMEOUT_MS), full);
      return { ...full, redeploy: again.serveMs };
    },
  };
}
