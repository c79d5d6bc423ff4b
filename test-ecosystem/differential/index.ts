/** The whole corpus, and the flows that deploy it. */
import type { FlowNode } from '../../bench/flows.js';
import { changeCases, switchCases } from './cases-change-switch.js';
import { envCases, functionCases, httpCases, linkCases, subflowCases } from './cases-flow.js';
import { filterDelayCases, sortBatchCases, splitJoinCases } from './cases-sequence.js';
import { csvCases, htmlCases, parserCases, rangeCases, templateCases } from './cases-transform.js';
import { jsonSchemaCases, xmlOptionCases } from './cases-parsers.js';
import { ioCases } from './cases-io.js';
import { csvModeCases, htmlDocCases, rangeEdgeCases } from './cases-csv-html.js';
import { uploadCases } from './cases-upload.js';
import { batchTimingCases, delayTimingCases, joinTimingCases, triggerCases } from './cases-timing.js';
import { networkCases } from './cases-network.js';
import { nodeRed5Cases } from './cases-nr5.js';
import { nodeRed5TlsCases } from './cases-nr5-tls.js';
import { caseFlows, readyFlow, type DiffCase } from './harness.js';

export const cases: DiffCase[] = [
  ...changeCases, ...switchCases, ...templateCases, ...rangeCases, ...parserCases, ...htmlCases, ...csvCases,
  ...splitJoinCases, ...sortBatchCases, ...filterDelayCases, ...functionCases, ...linkCases, ...httpCases,
  ...envCases, ...subflowCases, ...jsonSchemaCases, ...xmlOptionCases,
  ...ioCases,
  ...csvModeCases, ...htmlDocCases, ...rangeEdgeCases,
  ...uploadCases,
  ...triggerCases, ...delayTimingCases, ...batchTimingCases, ...joinTimingCases,
  ...networkCases,
  ...nodeRed5Cases, ...nodeRed5TlsCases,
];

/** Process environment both systems start with (whole-value ${VAR} and env-typed values read it). */
export const PROCESS_ENV = { DIFF_NAME: 'alpha', DIFF_NUM: '42' };

export function corpusFlows(): FlowNode[] {
  const names = new Set<string>();
  for (const c of cases) {
    if (names.has(c.name)) throw new Error(`duplicate case ${c.name}`);
    names.add(c.name);
  }
  return [...readyFlow(), ...cases.flatMap(caseFlows)];
}
