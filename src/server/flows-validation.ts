import { RunnelError } from '../base/errors.js';
import type { FlowNodeConfig } from '../storage/contract.js';

const MAX_NODES = 200_000;
/**
 * Real node configurations nest a few levels; the runtime hashes, clones and diffs them
 * recursively, so an absurdly deep one would exhaust the stack mid-deploy.
 */
const MAX_DEPTH = 512;

function invalid(message: string): RunnelError {
  return new RunnelError('invalid_flows', message);
}

/**
 * Checks a deploy body's node list before anything is touched: every element an object with a
 * string `id` and `type`, ids unique, `wires` (when present) an array of arrays of strings, inline
 * `credentials` an object. Node-RED accepts all of these silently and misbehaves later.
 */
export function validateFlows(flows: unknown[]): FlowNodeConfig[] {
  if (flows.length > MAX_NODES) throw invalid(`A configuration may hold at most ${MAX_NODES} nodes`);
  const seen = new Set<string>();
  for (let i = 0; i < flows.length; i++) {
    const n = flows[i] as Record<string, unknown>;
    if (n === null || typeof n !== 'object' || Array.isArray(n)) throw invalid(`flows[${i}] must be an object`);
    if (typeof n.id !== 'string' || n.id.length === 0) throw invalid(`flows[${i}] needs a non-empty string "id"`);
    if (typeof n.type !== 'string' || n.type.length === 0) throw invalid(`node ${n.id} needs a non-empty string "type"`);
    if (seen.has(n.id)) throw invalid(`node id ${n.id} is used more than once`);
    seen.add(n.id);
    if (n.z !== undefined && n.z !== null && typeof n.z !== 'string') throw invalid(`node ${n.id}: "z" must be a string`);
    if (n.wires !== undefined) {
      if (!Array.isArray(n.wires) || !n.wires.every((w) => Array.isArray(w) && w.every((t) => typeof t === 'string'))) {
        throw invalid(`node ${n.id}: "wires" must be an array of arrays of node ids`);
      }
    }
    if (n.credentials !== undefined && (n.credentials === null || typeof n.credentials !== 'object' || Array.isArray(n.credentials))) {
      throw invalid(`node ${n.id}: "credentials" must be an object`);
    }
    assertShallow(n, `node ${n.id}: properties`);
  }
  return flows as FlowNodeConfig[];
}

/** Refuses a value nested beyond MAX_DEPTH; `what` names it in the error. */
export function assertShallow(value: object, what: string): void {
  if (tooDeep(value)) throw invalid(`${what} are nested more than ${MAX_DEPTH} levels deep`);
}

/**
 * Recursive but cut off at MAX_DEPTH, so it cannot overflow the stack it protects; no allocation
 * per value (a deploy of 10,000 nodes walks every one of their values).
 */
function tooDeep(value: object, depth = 1): boolean {
  if (depth > MAX_DEPTH) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (child !== null && typeof child === 'object' && tooDeep(child, depth + 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const child: unknown = (value as Record<string, unknown>)[key];
    if (child !== null && typeof child === 'object' && tooDeep(child, depth + 1)) return true;
  }
  return false;
}
