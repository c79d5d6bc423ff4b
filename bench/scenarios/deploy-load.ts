import { deployBody, postFlows, timedDeploy } from '../admin-client.js';
import { slowAnswerFlow, type FlowNode } from '../flows.js';
import { cannonUntil } from '../load.js';
import { adminToken, DEPLOY_TIMEOUT_MS, sleep } from './common.js';
import type { Scenario } from './types.js';

const PATH = 'bench/deploy-load';
const BODY = 'answered';
/** How long the function takes to answer, as a flow calling a backend does. */
const ANSWER_MS = 20;
const DEPLOYS = 100;
/** The variant's deploys, spaced out as an operator or a script deploying in a loop does. */
const SPACED_DEPLOYS = 30;
const SPACED_EVERY_MS = 100;

/** The flow as scripts write flows, without x/y: Node-RED's rule then calls its nodes config nodes. */
function withoutPositions(flows: FlowNode[]): FlowNode[] {
  return flows.map(({ x: _x, y: _y, ...node }) => node);
}

/**
 * deploy-under-load: --connections keep-alive clients keep requesting http in → function (answers
 * from a 20 ms timer) → http response while 100 consecutive full deploys replace the function,
 * then 30 more spaced 100 ms apart of the same flow without x/y (as scripts write flows). Every
 * request should be answered, by the old flow or the new one; failures are non-2xx answers,
 * errors and timeouts (autocannon gives up after 30 s, so a request a runtime leaves hanging counts).
 */
export const deployUnderLoadScenario: Scenario = {
  name: 'deploy-under-load',
  description: `GET through http in → function (answers after ${ANSWER_MS} ms) → http response with --connections clients during ${DEPLOYS} full deploys replacing the function, then ${SPACED_DEPLOYS} ${SPACED_EVERY_MS} ms apart of it without x/y`,
  systems: ['runnel', 'node-red'],
  metrics: [
    { key: 'answered', label: 'requests answered', unit: 'requests', digits: 0 },
    { key: 'failed', label: 'requests failed', unit: 'requests', digits: 0, goals: [{ kind: 'absolute', op: '<', value: 1 }] },
    { key: 'p99', label: 'latency p99', unit: 'ms', digits: 0 },
    { key: 'deploys', label: `${DEPLOYS} deploys took`, unit: 'ms', digits: 0 },
  ],
  async measure(system, ctx) {
    const token = await adminToken(system, ctx);
    const url = system.base + PATH;
    const version = (v: number) => deployBody(slowAnswerFlow(v, `/${PATH}`, BODY, ANSWER_MS));
    await timedDeploy(system.base, token, version(0), 'full', url, BODY, DEPLOY_TIMEOUT_MS);
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const load = cannonUntil({ url, connections: ctx.opts.connections, duration: 3600, expectBody: BODY }, stopped);
    try {
      // The clients are connected and in steady state before the first deploy.
      await sleep(1000);
      const t0 = performance.now();
      for (let v = 1; v <= DEPLOYS; v++) await postFlows(system.base, token, version(v), 'full', AbortSignal.timeout(DEPLOY_TIMEOUT_MS));
      const deploys = performance.now() - t0;
      for (let v = 1; v <= SPACED_DEPLOYS; v++) {
        const body = deployBody(withoutPositions(slowAnswerFlow(DEPLOYS + v, `/${PATH}`, BODY, ANSWER_MS)));
        await Promise.all([postFlows(system.base, token, body, 'full', AbortSignal.timeout(DEPLOY_TIMEOUT_MS)), sleep(SPACED_EVERY_MS)]);
      }
      // A request a runtime left hanging counts once autocannon gives up on it (30 s).
      await sleep(31_000);
      stop();
      const r = await load;
      ctx.log(`  ${system.kind}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${r.mismatches} wrong bodies`);
      return { answered: r.ok, failed: r.non2xx + r.errors + r.timeouts + r.mismatches, p99: r.p99, deploys };
    } finally {
      stop();
      await load.catch(() => undefined);
    }
  },
};
