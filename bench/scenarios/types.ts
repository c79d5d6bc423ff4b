import type { Options } from '../cli-args.js';
import type { RunningSystem, SystemEnv, SystemKind } from '../systems.js';

/**
 * A goal from the issue: a ratio Runnel/Node-RED, an absolute bound on Runnel's figure, or
 * Runnel's fraction of the bare ceiling (node:http, ws or MQTT.js alone doing the same work).
 */
export type Goal =
  | { kind: 'ratio'; op: '<=' | '>='; value: number }
  | { kind: 'absolute'; op: '<'; value: number }
  | { kind: 'ceiling'; op: '>='; value: number };

export interface MetricDef {
  key: string;
  label: string;
  unit: string;
  /** Decimals to print. */
  digits: number;
  goals?: Goal[];
  /** Also show Runnel's fraction of the bare server's figure. */
  vsCeiling?: boolean;
}

export interface ScenarioContext {
  env: SystemEnv;
  opts: Options;
  /** A progress or warning line on stderr. */
  log(line: string): void;
}

/**
 * A round the system did not finish in the time the harness allows (Node-RED deploying 100,000
 * nodes): its cells show `note` instead of a figure, beside whatever `values` were measured before.
 */
export class RoundCutOff extends Error {
  constructor(readonly note: string, readonly values: Record<string, number> = {}) {
    super(note);
  }
}

export interface Scenario {
  name: string;
  description: string;
  /** Which systems take part (the bare server only where it is the ceiling). */
  systems: SystemKind[];
  metrics: MetricDef[];
  /** What the bare server answers in this scenario, when it is not the http-chain body. */
  bareBody?(ctx: ScenarioContext): { body: string; type: string };
  /** The bare ceiling's script (in the bench folder), when it is not the node:http server. */
  bareScript?: string;
  /** A flows.json placed in the system's user dir before it starts. */
  seedFlows?(ctx: ScenarioContext): string;
  /** One round on a freshly started system; returns a value per metric key. */
  measure(system: RunningSystem, ctx: ScenarioContext): Promise<Record<string, number>>;
}
