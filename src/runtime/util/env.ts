/** Environment lookups for nodes: predefined NR_NODE_* names, then the flow's env, then the process. */
import type { FlowSettings } from './types.js';

/** The part of a node an env lookup reads; every member is optional so partial nodes work. */
export interface EnvNode {
  id?: string;
  name?: string;
  _path?: string;
  _flow?: FlowSettings;
}

const WHOLE_TEMPLATE = /^\${[^}]+}$/;
const HAS_TEMPLATE = /\${\S+}/;
const TEMPLATES = /\${([^}]+)}/g;

/**
 * The value of env variable `name` as seen by `node`. The flow (a tab or subflow instance, which
 * also answers for group env and NR_FLOW_* names) decides when there is one; otherwise the
 * process environment does.
 */
export function getSetting(node: EnvNode | null | undefined, name: string, flow?: FlowSettings | null): unknown {
  if (node) {
    if (name === 'NR_NODE_NAME') return node.name;
    if (name === 'NR_NODE_ID') return node.id;
    if (name === 'NR_NODE_PATH') return node._path;
  }
  const source = flow ?? node?._flow;
  if (source) return source.getSetting(name);
  return process.env[name];
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
