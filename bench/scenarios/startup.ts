import { waitForBody } from '../poll.js';
import { bigConfig, DEPLOY_TIMEOUT_MS, PROBE_PATH } from './common.js';
import type { Scenario } from './types.js';

/**
 * startup-10k: process start with the 10,000-node config already in the user dir's flows.json
 * (as after a reboot), until the admin API answers `GET /auth/login` and until the config serves.
 */
export const startupScenario: Scenario = {
  name: 'startup-10k',
  description: 'process start with a 10,000-node flows.json in the user dir, until GET /auth/login answers and until its http-in probe serves',
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'admin', label: 'until /auth/login answers', unit: 'ms', digits: 0, goals: [{ kind: 'ratio', op: '<=', value: 0.2 }] },
    { key: 'serve', label: 'until the flows serve', unit: 'ms', digits: 0, goals: [{ kind: 'ratio', op: '<=', value: 0.2 }] },
  ],
  seedFlows: (ctx) => JSON.stringify(bigConfig(ctx, 'ready').flows),
  async measure(system) {
    const servedAt = await waitForBody(system.base + PROBE_PATH, 'ready', DEPLOY_TIMEOUT_MS);
    return { admin: system.readyAt - system.spawnedAt, serve: servedAt - system.spawnedAt };
  },
};
