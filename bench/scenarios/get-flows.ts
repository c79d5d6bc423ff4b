import { flowsHeaders } from '../admin-client.js';
import { cannon } from '../load.js';
import { adminToken, bigConfig, checkCannon, deployServing } from './common.js';
import type { Scenario } from './types.js';

/** Fewer connections than http-chain: each answer is megabytes of JSON. */
const CONNECTIONS = 10;

export const getFlowsScenario: Scenario = {
  name: 'get-flows-10k',
  description: `GET /flows (v2) on the 10,000-node config, autocannon ${CONNECTIONS} connections × --duration`,
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'rps', label: 'req/s', unit: 'req/s', digits: 1, goals: [{ kind: 'ratio', op: '>=', value: 10 }] },
    { key: 'p50', label: 'latency p50', unit: 'ms', digits: 1 },
  ],
  async measure(system, ctx) {
    const token = await adminToken(system, ctx);
    await deployServing(system, token, bigConfig(ctx, 'ready'), 'ready');
    const r = checkCannon(
      await cannon({
        url: `${system.base}flows`,
        connections: CONNECTIONS,
        duration: ctx.opts.duration,
        headers: flowsHeaders(token),
      }),
      `${system.kind} GET /flows`, ctx,
    );
    return { rps: r.rps, p50: r.p50 };
  },
};
