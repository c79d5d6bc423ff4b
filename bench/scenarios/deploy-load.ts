import { deployBody, postFlows, timedDeploy } from '../admin-client.js';
import { slowAnswerFlow } from '../flows.js';
import { cannonUntil } from '../load.js';
import { adminToken, DEPLOY_TIMEOUT_MS, sleep } from './common.js';
import type { Scenario } from './types.js';

const PATH = 'bench/deploy-load';
const BODY = 'answered';
/** How long the function takes to answer, as a flow calling a backend does. */
const ANSWER_MS = 20;
const DEPLOYS = 100;

/**
 * deploy-under-load: --connections clients keep requesting http in → function (answers after
 * 20 ms) → http response while 100 consecutive full deploys replace the function. Every request
 * should be answered, by the old flow or the new one; failures are non-2xx answers, errors and
 * timeouts (autocannon gives up after 30 s, so a request a runtime leaves hanging counts).
 */
export const deployUnderLoadScenario: Scenario = {
  name: 'deploy-under-load',
  description: `GET through http in → function (answers after ${ANSWER_MS} ms) → http response with --connections clients during ${DEPLOYS} full deploys replacing the function`,
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
