/**
 * The shapes RED.util and the context stores share. Kept structural so util never imports the
 * engine's Node class: anything with these members (a real node, a test double) works.
 */

/** `cb(err, v1, v2, …)`: one value argument per requested key. */
export type ContextCallback = (err?: Error | null, ...values: unknown[]) => void;

/** One context scope (node, flow or global). Every method works whatever `this` is. */
export interface ContextScope {
  get(key: string | string[], store?: string | ContextCallback, cb?: ContextCallback): unknown;
  set(key: string | string[], value?: unknown, store?: string | ContextCallback, cb?: ContextCallback): void;
  keys(store?: string | ContextCallback, cb?: ContextCallback): string[] | undefined;
}

/** What `node.context()` returns: the node scope plus non-enumerable `flow` and `global`. */
export interface NodeContext extends ContextScope {
  /** Absent for a node outside any flow (a global config node), as in Node-RED. */
  readonly flow?: ContextScope;
  readonly global: ContextScope;
  /** Legacy modules keep their own state on the context object. */
  [extra: string]: unknown;
}

/** The part of a flow that env lookups need (tab, subflow and group env live behind it). */
export interface FlowSettings {
  getSetting(name: string): unknown;
  /** The group a node with a `g` reads its env through. */
  getGroupNode?(id: string): FlowSettings | undefined;
}

/** The part of a node RED.util reads. */
export interface UtilNode {
  id: string;
  name?: string;
  type?: string;
  z?: string;
  g?: string;
  _path?: string;
  _flow?: FlowSettings;
  context(): NodeContext;
}

/** Node-style completion callback used by evaluateNodeProperty and JSONata evaluation. */
export type ResultCallback = (err: Error | null, result?: unknown) => void;

/** An Error carrying a stable `code`, as Node-RED's util creates them. */
export interface CodedError extends Error {
  code: string;
}

export function codedError(code: string, message: string): CodedError {
  const err = new Error(message) as CodedError;
  err.code = code;
  return err;
}
