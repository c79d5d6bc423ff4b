import { deployBody, timedDeploy } from '../admin-client.js';
import { httpChainFlow } from '../flows.js';
import { cannon } from '../load.js';
import { adminToken, checkCannon, DEPLOY_TIMEOUT_MS } from './common.js';
import type { Scenario } from './types.js';

export const HTTP_BODY = 'hello world';
const PATH = 'bench/http';

/**
 * http-chain-K: http in → K change/function nodes → http response under autocannon; the bare
 * node:http server answering the same body is measured alongside as the ceiling.
 */
export function httpChainScenario(length: number): Scenario {
  return {
    name: `http-chain-${length}`,
    description: `GET through http in → ${length} change/function node(s) → http response, autocannon (--connections × --duration)`,
    systems: ['runnel', 'node-red', 'bare'],
    metrics: [
      {
        key: 'rps', label: 'req/s', unit: 'req/s', digits: 0, vsCeiling: true,
        goals: [
          { kind: 'ratio', op: '>=', value: 5 },
          ...(length === 1 ? [{ kind: 'ceiling' as const, op: '>=' as const, value: 0.8 }] : []),
        ],
      },
      { key: 'p50', label: 'latency p50', unit: 'ms', digits: 1 },
      { key: 'p99', label: 'latency p99', unit: 'ms', digits: 1 },
    ],
    async measure(system, ctx) {
      if (system.kind !== 'bare') {
        const token = await adminToken(system, ctx);
        const body = deployBody(httpChainFlow(length, `/${PATH}`, HTTP_BODY));
        await timedDeploy(system.base, token, body, 'full', system.base + PATH, HTTP_BODY, DEPLOY_TIMEOUT_MS);
      }
      const r = checkCannon(
        await cannon({
          url: system.base + PATH,
          connections: ctx.opts.connections,
          duration: ctx.opts.duration,
          expectBody: HTTP_BODY,
        }),
        `${system.kind} ${PATH}`, ctx,
      );
      return { rps: r.rps, p50: r.p50, p99: r.p99 };
    },
  };
}
