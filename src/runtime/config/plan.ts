import { hashJson } from '../../storage/rev.js';
import type { FlowNodeConfig } from '../../storage/contract.js';
import { parseConfig, type ParsedConfig } from './config.js';
import { diffConfigs, stopSet, type ConfigDiff } from './diff.js';
import type { DeploymentType } from './deploy-types.js';

/**
 * The part of a deploy that decides, without touching anything, what the new configuration is and
 * what the deployment type stops and rewires. The deploy and its preview both call it, so the
 * preview cannot drift from what a deploy does.
 */
export interface DeployPlan {
  /** The configuration as deployed (before this instance's view of it). */
  flows: FlowNodeConfig[];
  parsed: ParsedConfig;
  /** The compact JSON of the flows; its SHA-256 is the rev. */
  json: string;
  /**
   * `json` as UTF-8, encoded once: the hash and both files of a save take these bytes, where each
   * took the text and encoded it again (three encodings of 23 MB at 100,000 nodes).
   */
  bytes: Buffer;
  rev: string;
  /** Ids to stop (and restart if still active), or every running node. */
  stop: Set<string> | 'all';
  /** Nodes that keep running and get their new wires in place. */
  rewired: Iterable<string>;
  /** The deployment type in effect: `full` when a global-config change forces it. */
  type: Exclude<DeploymentType, 'reload'>;
  /** The diff with the old configuration, made on first call (a full deploy needs it only if a RED.events listener reads it). */
  diff(): ConfigDiff;
}

export function planDeploy(
  old: ParsedConfig,
  flows: FlowNodeConfig[],
  credentialChanges: Set<string>,
  type: Exclude<DeploymentType, 'reload'>,
  isKnownType: (type: string) => boolean,
  /** What this instance runs of `flows` (a cluster member off the primary disables primary-only tabs). */
  view: (flows: FlowNodeConfig[]) => FlowNodeConfig[] = (f) => f,
): DeployPlan {
  const parsed = parseConfig(view(flows), isKnownType);
  // One serialisation serves the rev, the file, GET /flows and the diff's fast path.
  const texts = new Array<string>(flows.length);
  const byId = new Map<string, string>();
  for (let i = 0; i < flows.length; i++) byId.set(flows[i].id, (texts[i] = JSON.stringify(flows[i])));
  parsed.text = byId;
  const json = `[${texts.join(',')}]`;
  const bytes = Buffer.from(json);
  const rev = hashJson(bytes);
  let made: ConfigDiff | undefined;
  const diff = () => (made ??= diffConfigs(old, parsed, credentialChanges));
  if (type !== 'full' && !diff().globalConfigChanged) {
    return { flows, parsed, json, bytes, rev, stop: stopSet(type, diff(), old, parsed), rewired: diff().rewired, type, diff };
  }
  return { flows, parsed, json, bytes, rev, stop: 'all', rewired: [], type: 'full', diff };
}
