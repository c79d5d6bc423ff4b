import { rssMiB } from '../systems.js';
import { adminToken, bigConfig, deployServing, sleep } from './common.js';
import type { Scenario } from './types.js';

/** Time for start-up and deploy garbage to be collected before reading memory. */
const SETTLE_MS = 3000;

export const rssScenario: Scenario = {
  name: 'rss',
  description: 'resident memory idle after start, and after deploying the 10,000-node config',
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'idle', label: 'RSS idle', unit: 'MiB', digits: 1, goals: [{ kind: 'ratio', op: '<=', value: 0.6 }] },
    { key: 'big', label: 'RSS with 10,000 nodes', unit: 'MiB', digits: 1, goals: [{ kind: 'ratio', op: '<=', value: 0.2 }] },
  ],
  async measure(system, ctx) {
    await sleep(SETTLE_MS);
    const idle = await rssMiB(system.pid);
    const token = await adminToken(system, ctx);
    await deployServing(system, token, bigConfig(ctx, 'ready'), 'ready');
    await sleep(SETTLE_MS);
    return { idle, big: await rssMiB(system.pid) };
  },
};
