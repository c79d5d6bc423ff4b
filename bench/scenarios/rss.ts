import { anonRssMiB, rssMiB } from '../systems.js';
import { adminToken, bigConfig, deployServing, sleep } from './common.js';
import type { Scenario } from './types.js';

/**
 * Time for start-up and deploy garbage to be collected before reading memory: 10 s, because V8
 * gives back its young generation only after it has seen about 5 s of low allocation (Runnel helps
 * it along with a scavenge a second, see src/base/memory-trim.ts; Node-RED keeps its 32 MiB). The
 * figure at 3 s is reported too.
 */
const SETTLE_MS = 10_000;
const EARLY_MS = 3000;

export const rssScenario: Scenario = {
  name: 'rss',
  description: 'resident memory idle after start (3 s and 10 s), and 10 s after deploying the 10,000-node config',
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'early', label: 'RSS 3 s after start', unit: 'MiB', digits: 1 },
    { key: 'idle', label: 'RSS idle (10 s)', unit: 'MiB', digits: 1, goals: [{ kind: 'ratio', op: '<=', value: 0.6 }] },
    { key: 'idleAnon', label: 'private memory idle (10 s, RssAnon)', unit: 'MiB', digits: 1 },
    { key: 'big', label: 'RSS with 10,000 nodes', unit: 'MiB', digits: 1, goals: [{ kind: 'ratio', op: '<=', value: 0.2 }] },
    { key: 'bigAnon', label: 'private memory with 10,000 nodes (RssAnon)', unit: 'MiB', digits: 1 },
  ],
  async measure(system, ctx) {
    await sleep(EARLY_MS);
    const early = await rssMiB(system.pid);
    await sleep(SETTLE_MS - EARLY_MS);
    const idle = await rssMiB(system.pid);
    const idleAnon = await anonRssMiB(system.pid);
    const token = await adminToken(system, ctx);
    await deployServing(system, token, bigConfig(ctx, 'ready'), 'ready');
    await sleep(SETTLE_MS);
    return { early, idle, idleAnon, big: await rssMiB(system.pid), bigAnon: await anonRssMiB(system.pid) };
  },
};
