import type { Runtime } from '../runtime.js';
import type { FlowNodeConfig } from '../../storage/contract.js';
import type { DeployPreview, DeployRequest, DeploymentType, FlowsState } from '../config/deploy-types.js';
import { addFlow, getFlow, removeFlow, updateFlow, type FlowBody } from '../config/single-flow.js';
import type { Caller } from './caller.js';

export type { DeployPreview, DeploymentType, FlowsState, FlowBody, FlowNodeConfig };

/** A deploy as a client sends it: the configuration, its credentials and the rev it was based on. */
export type Deploy = Omit<DeployRequest, keyof Caller>;

/**
 * Checks a whole configuration before it is deployed and answers it typed (or throws
 * `invalid_flows`): the checks a deploy body passes, applied to the result of a single-flow edit.
 */
export type FlowsCheck = (flows: unknown[]) => FlowNodeConfig[];

/** The active configuration and its deploys: GET/POST /flows, /flows/state, /flow/:id. */
export interface FlowsApi {
  /** The active configuration's rev. */
  rev(): string;
  /** The active configuration as the GET /flows body of `version`, encoded once per rev. */
  getFlowsJson(version: 'v1' | 'v2'): Buffer;
  /** Whether the flows run, are stopped or in safe mode; the types missing and the nodes failing. */
  getState(): FlowsState;
  /** Whether flows may be stopped and started over the API (runtimeState.enabled, or safe mode). */
  canSetState(): boolean;
  /** Stops every flow or starts them again (a stop survives a restart); audited. */
  setState(state: 'start' | 'stop', caller: Caller): Promise<void>;
  /**
   * Deploys a configuration (or reloads the stored one) and answers its rev once saved and started;
   * audited. `version_mismatch` when `deploy.rev` is not the active rev.
   */
  setFlows(deploy: Deploy, caller: Caller): Promise<{ rev: string }>;
  /** What `setFlows(deploy)` would stop, start and rewire; changes nothing. */
  preview(deploy: Deploy): Promise<DeployPreview>;
  /** One tab (or `global`) in Node-RED's shape, credentials left out; undefined for no such tab. */
  getFlow(id: string): FlowBody | undefined;
  /** Adds a tab with its nodes as a `flows` deploy; answers the tab's new id. */
  addFlow(flow: Record<string, unknown>, caller: Caller): Promise<string>;
  /** Replaces a tab and its nodes (or the global config nodes and subflows) as a `flows` deploy. */
  updateFlow(id: string, flow: Record<string, unknown>, caller: Caller): Promise<void>;
  /** Removes a tab and its nodes as a `flows` deploy. */
  removeFlow(id: string, caller: Caller): Promise<void>;
  /**
   * While the flows have not started yet or a deploy is restarting nodes: resolves when they run
   * again (http-in requests that find no route wait for it); undefined when nothing is under way.
   */
  pending(): Promise<void> | undefined;
}

export function flowsApi(runtime: Runtime, check: FlowsCheck): FlowsApi {
  const edit = (change: (flows: FlowNodeConfig[]) => FlowNodeConfig[], caller: Caller) =>
    runtime.editFlows((flows) => check(change(flows)), { type: 'flows', ...caller });
  return {
    rev: () => runtime.rev,
    getFlowsJson: (version) => runtime.getFlowsJson(version),
    getState: () => runtime.getState(),
    canSetState: () => runtime.runtimeStateEnabled,
    setState: (state, caller) => runtime.setFlowsState(state, caller),
    setFlows: async (deploy, caller) => ({ rev: (await runtime.deploy({ ...deploy, ...caller })).rev }),
    preview: (deploy) => runtime.preview(deploy),
    getFlow: (id) => getFlow(runtime.getFlows().flows, id),
    addFlow: async (flow, caller) => {
      let id = '';
      await edit((flows) => {
        const added = addFlow(flows, flow);
        id = added.id;
        return added.flows;
      }, caller);
      return id;
    },
    updateFlow: async (id, flow, caller) => void (await edit((flows) => updateFlow(flows, id, flow), caller)),
    removeFlow: async (id, caller) => void (await edit((flows) => removeFlow(flows, id), caller)),
    pending: () => runtime.flowsPending,
  };
}
