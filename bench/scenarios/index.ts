import type { Options } from '../cli-args.js';
import { deployScenario, redeployScenario } from './deploy.js';
import { deployUnderLoadScenario } from './deploy-load.js';
import { getFlowsScenario } from './get-flows.js';
import { httpChainScenario } from './http-chain.js';
import { loginRateScenario } from './login-rate.js';
import { msgThroughputScenario } from './msg-throughput.js';
import { mqttPipelineScenario, websocketEchoScenario } from './network.js';
import { rssScenario } from './rss.js';
import { startupScenario } from './startup.js';
import { scaleScenario, SCALE_SIZES } from './scale.js';
import { editorScenarios } from './editor.js';
import type { Scenario } from './types.js';

/** The scale curve's last point in a --quick run (Node-RED takes minutes per deploy beyond it). */
const QUICK_SCALE_MAX = 10_000;

/** Every scenario, in run order; the deploy sizes come from --deploy-sizes. */
export function allScenarios(opts: Options): Scenario[] {
  return [
    ...opts.deploySizes.map((n) => deployScenario(n, n === 10_000 ? 0.1 : undefined)),
    redeployScenario,
    httpChainScenario(1),
    httpChainScenario(10),
    deployUnderLoadScenario,
    msgThroughputScenario,
    mqttPipelineScenario,
    websocketEchoScenario,
    getFlowsScenario,
    loginRateScenario,
    rssScenario,
    startupScenario,
    ...SCALE_SIZES.filter((n) => !opts.quick || n <= QUICK_SCALE_MAX).map(scaleScenario),
    ...editorScenarios,
  ];
}
