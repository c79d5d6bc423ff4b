/** Environment lookups for nodes: predefined NR_NODE_* names, then the flow's env, then the process. */
import { processEnv } from './process-env.js';
import type { FlowSettings } from './types.js';

/** The part of a node an env lookup reads; every member is optional so partial nodes work. */
export interface EnvNode {
  id?: string;
  name?: string;
  g?: string;
  _path?: string;
  _flow?: FlowSettings;
}

const WHOLE_TEMPLATE = /^\${[^}]+}$/;
const HAS_TEMPLATE = /\${\S+}/;
const TEMPLATES = /\${([^}]+)}/g;

/**
 * The value of env variable `name` as seen by `node`: its group's env when it is in a group (which
 * falls back to enclosing groups), the flow's (a tab or subflow instance, which also answers
 * NR_FLOW_* names), the global env, then the process environment.
 */
export function getSetting(node: EnvNode | null | undefined, name: string, flow?: FlowSettings | null): unknown {
  if (node) {
    if (name === 'NR_NODE_NAME') return node.name;
    if (name === 'NR_NODE_ID') return node.id;
    if (name === 'NR_NODE_PATH') return node._path;
  }
  const source = flow ?? node?._flow;
  if (source) {
    const group = node?.g ? source.getGroupNode?.(node.g) : undefined;
    return (group ?? source).getSetting(name);
  }
  return processEnv(name);
}

/** `${X}` or a bare `X` is looked up; `a${X}b` is substituted piecewise; undefined becomes "". */
export function evaluateEnvProperty(value: string, node: EnvNode | null | undefined): unknown {
  let result: unknown;
  if (WHOLE_TEMPLATE.test(value)) {
    result = getSetting(node, value.substring(2, value.length - 1));
  } else if (!HAS_TEMPLATE.test(value)) {
    result = getSetting(node, value);
  } else {
    return value.replace(TEMPLATES, (_match, name: string) => {
      const v = getSetting(node, name);
      return v === undefined ? '' : String(v);
    });
  }
  return result === undefined ? '' : result;
}
