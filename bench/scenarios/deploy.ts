import { deployBody, timedDeploy } from '../admin-client.js';
import { benchConfig, withProbeBody } from '../flows.js';
import { adminToken, bigConfig, deployServing, DEPLOY_TIMEOUT_MS, PROBE_PATH, sleep } from './common.js';
import type { Scenario } from './types.js';

// "of bare" is Runnel's time over the floor's (bare-deploy.ts): how many times the least work it takes.
const timingMetrics = (goal?: number) => [
  {
    key: 'serve', label: 'until serving', unit: 'ms', digits: 1, vsCeiling: true,
    goals: goal === undefined ? undefined : [{ kind: 'ratio' as const, op: '<=' as const, value: goal }],
  },
  { key: 'reply', label: 'until HTTP reply', unit: 'ms', digits: 1 },
];
const BARE_DEPLOY = 'bare-deploy.js';

/** deploy-N: a full deploy of N nodes on an empty runtime, timed until its probe serves. */
export function deployScenario(nodes: number, goal?: number): Scenario {
  return {
    name: `deploy-${nodes}`,
    description: `POST /flows (v2, full) of ${nodes} nodes in chains until an http-in probe in the config answers`,
    systems: ['runnel', 'node-red', 'bare'],
    bareScript: BARE_DEPLOY,
    metrics: timingMetrics(goal),
    async measure(system, ctx) {
      const token = await adminToken(system, ctx);
      const t = await deployServing(system, token, benchConfig(nodes, `/${PROBE_PATH}`, `ready-${nodes}`), `ready-${nodes}`);
      return { serve: t.serveMs, reply: t.replyMs };
    },
  };
}

/** redeploy-nodes-1of10k: a `nodes` deploy changing the probe's function node in the big config. */
export const redeployScenario: Scenario = {
  name: 'redeploy-nodes-1of10k',
  description: 'POST /flows (v2, nodes) changing one function node of the 10,000-node config, until the change is observable',
  systems: ['runnel', 'node-red', 'bare'],
  bareScript: BARE_DEPLOY,
  metrics: timingMetrics(0.1),
  async measure(system, ctx) {
    const token = await adminToken(system, ctx);
    const config = bigConfig(ctx, 'v1');
    await deployServing(system, token, config, 'v1');
    // Lets the runtime finish whatever it does after the flow serves (persisting, logging).
    await sleep(1000);
    const body = deployBody(withProbeBody(config, 'v2'));
    const t = await timedDeploy(system.base, token, body, 'nodes', system.base + PROBE_PATH, 'v2', DEPLOY_TIMEOUT_MS);
    return { serve: t.serveMs, reply: t.replyMs };
  },
};
