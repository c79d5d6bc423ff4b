import type { FlowNodeConfig } from '../../storage/contract.js';
import { parseConfig, type ParsedConfig } from '../config/config.js';
import { primaryView } from '../config/primary-only.js';

export interface ActiveConfig {
  flows: FlowNodeConfig[];
  parsed: ParsedConfig;
  rev: string;
  /** `JSON.stringify(flows)`, when a deploy already made it. */
  json?: string;
  /** Encoded GET /flows bodies for this rev, built on first request. */
  v1?: Buffer;
  v2?: Buffer;
}

/**
 * The configuration this instance runs and whether it runs it: what deploys, following another
 * instance and loading replace, and what the flows' state and notifications report.
 */
export class RunState {
  active: ActiveConfig;
  started = false;
  /** Safe mode: the flows are loaded, not started, until a deploy or POST /flows/state starts them. */
  safeMode: boolean;
  /** Whether primary-only tabs run here: always for a single instance, for the elected one in a cluster. */
  primary: boolean;

  constructor(private readonly isKnownType: (type: string) => boolean, options: { safeMode: boolean; primary: boolean }) {
    this.safeMode = options.safeMode;
    this.primary = options.primary;
    this.active = { flows: [], parsed: parseConfig([], isKnownType), rev: '' };
  }

  /** What this instance runs of `flows`: primary-only tabs are disabled off the primary. */
  view = (flows: FlowNodeConfig[]): FlowNodeConfig[] => primaryView(flows, this.primary);

  parse(flows: FlowNodeConfig[]): ParsedConfig {
    return parseConfig(this.view(flows), this.isKnownType);
  }
}
