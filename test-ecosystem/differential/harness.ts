/**
 * How a differential case becomes a flow: each case gets its own tab with
 * `http in` (POST /diff/<name>) → `prep` → the nodes under test → `norm` → `http response`.
 * `prep` turns the JSON request body into message properties (so a case can start from any
 * msg.payload, not only the objects a JSON body parser accepts); `norm` drops the properties
 * that differ per request (_msgid, req, res, sequence ids, stacks) and, for cases whose nodes
 * emit several messages, gathers them into one answer.
 */
import type { FlowNode } from '../../bench/flows.js';
import type { Answer } from './peers.js';

/** One HTTP request a case sends; both systems get exactly the same one. */
export type DiffRequest =
  /** POST a JSON body whose properties become message properties (the usual form). */
  | { msg: Record<string, unknown> }
  /** Any request straight to `http in` (cases with `http` set). */
  | { method: 'GET' | 'POST'; query?: string; body?: string; contentType?: string };

/**
 * How `norm` gathers output: `undefined` answers each message alone; a number answers once that
 * many messages arrived; 'last' answers at the message carrying `msg.last` (the `fan` helper sets
 * it on its final message, and equal path lengths keep delivery order).
 */
export type Collect = number | 'last';

export interface DiffCase {
  name: string;
  /** What behaviour real flows rely on here. */
  about: string;
  /** The nodes under test; the entry node's local id is `start`, `out` is the answer. */
  build(k: Kit): FlowNode[];
  requests: DiffRequest[];
  collect?: Collect;
  /** `http in` with this method wires straight to `start` (the request itself is under test). */
  http?: 'get' | 'post';
  /** `out` is the `http response` itself (status, headers and body are under test). */
  raw?: boolean;
  /** Response headers to compare besides content-type. */
  headers?: string[];
  /**
   * A deliberate difference, documented in the README: what Runnel answers instead, derived from
   * Node-RED's answer (so the case still pins what Node-RED does).
   */
  deviation?: { why: string; runnel(nodeRed: Answer): Answer };
  /** Properties of the case's tab (env, label). */
  tab?: Record<string, unknown>;
}

export const SHARED_TAB = 'diff-shared';
export const READY_PATH = 'diff/_ready';
export const READY_BODY = 'ready';

type Wires = string | string[];

/** Builds the nodes of one case with ids local to it. */
export class Kit {
  private y = 40;
  readonly tab: string;

  constructor(readonly name: string, private readonly outId: string) {
    this.tab = `diff-${name}`;
  }

  id(local: string): string {
    return local === 'out' ? this.outId : `d-${this.name}-${local}`;
  }

  /** A flow node on the case's tab (or on `z`); each wires entry is one output's local targets. */
  node(local: string, type: string, props: Record<string, unknown>, ...wires: Wires[]): FlowNode {
    return this.nodeOn(this.tab, local, type, props, ...wires);
  }

  nodeOn(z: string, local: string, type: string, props: Record<string, unknown>, ...wires: Wires[]): FlowNode {
    this.y += 40;
    const ports = wires.map((w) => (Array.isArray(w) ? w : [w]).map((t) => this.id(t)));
    return { id: this.id(local), type, z, name: '', x: 300, y: this.y, ...props, wires: ports };
  }

  /** A change node with the editor's full shape. */
  change(local: string, rules: Record<string, unknown>[], ...wires: Wires[]): FlowNode {
    return this.node(local, 'change', { rules, action: '', property: '', from: '', to: '', reg: false }, ...wires);
  }

  /** A function node with the editor's full shape; one wires entry per output. */
  fn(local: string, func: string, ...wires: Wires[]): FlowNode {
    return this.node(local, 'function', fnProps(func, wires.length), ...wires);
  }

  /** Sends each element of msg.payload as its own message, flagging the final one `last`. */
  fan(local: string, ...wires: Wires[]): FlowNode {
    return this.fn(local, FAN, ...wires);
  }

  /** Sets msg.port, to tell which output of a node a message left by. */
  mark(local: string, port: string | number, ...wires: Wires[]): FlowNode {
    return this.change(local, [{ t: 'set', p: 'port', pt: 'msg', to: String(port), tot: typeof port === 'number' ? 'num' : 'str' }], ...wires);
  }
}

export function fnProps(func: string, outputs: number): Record<string, unknown> {
  return { func, outputs, timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [] };
}

const FAN = `const items = msg.payload;
items.forEach((payload, i) => {
  const m = RED.util.cloneMessage(msg);
  m.payload = payload;
  if (i === items.length - 1) m.last = true;
  node.send(m);
});
return null;`;

const PREP = `const body = msg.payload;
delete msg.payload;
Object.assign(msg, body);
return msg;`;

function normBody(collect: Collect | undefined): string {
  const gather = collect === undefined
    ? 'return { payload: clean(msg), req: msg.req, res: msg.res };'
    : `const acc = context.get('acc') || [];
acc.push(clean(msg));
const done = ${collect === 'last' ? 'msg.last === true' : `acc.length >= ${collect}`};
context.set('acc', done ? [] : acc);
return done ? { payload: acc, req: msg.req, res: msg.res } : null;`;
  return `function parts(p) {
  const q = Object.assign({}, p);
  if ('id' in q) q.id = 'ID';
  if (q.parts) q.parts = parts(q.parts);
  return q;
}
function clean(m) {
  const out = {};
  for (const k of Object.keys(m)) if (k !== '_msgid' && k !== 'req' && k !== 'res') out[k] = m[k];
  if (out.parts) out.parts = parts(out.parts);
  if (out.error) { out.error = Object.assign({}, out.error); delete out.error.stack; }
  return out;
}
${gather}`;
}

/** The nodes of one case: its tab, the HTTP plumbing and the nodes under test. */
export function caseFlows(c: DiffCase): FlowNode[] {
  const names = { in: `d-${c.name}-_in`, prep: `d-${c.name}-_prep`, norm: `d-${c.name}-_norm`, res: `d-${c.name}-_res` };
  const k = new Kit(c.name, c.raw ? names.res : names.norm);
  const tabId = k.tab;
  const start = k.id('start');
  const plumbing: FlowNode[] = [
    { id: tabId, type: 'tab', label: c.name, disabled: false, info: c.about, env: [], ...c.tab },
    { id: names.in, type: 'http in', z: tabId, name: '', url: `/diff/${c.name}`, method: c.http ?? 'post', upload: false, swaggerDoc: '', x: 100, y: 40, wires: [[c.http ? start : names.prep]] },
    { id: names.res, type: 'http response', z: tabId, name: '', statusCode: '', headers: {}, x: 700, y: 40, wires: [] },
  ];
  if (!c.http) plumbing.push({ id: names.prep, type: 'function', z: tabId, name: 'prep', ...fnProps(PREP, 1), x: 200, y: 40, wires: [[start]] });
  if (!c.raw) plumbing.push({ id: names.norm, type: 'function', z: tabId, name: 'norm', ...fnProps(normBody(c.collect), 1), x: 600, y: 40, wires: [[names.res]] });
  return [...plumbing, ...c.build(k)];
}

/** The probe both systems must answer before cases run (a runtime may reply to deploy early). */
export function readyFlow(): FlowNode[] {
  return [
    { id: SHARED_TAB, type: 'tab', label: 'shared', disabled: false, info: '', env: [] },
    { id: 'diff-ready-in', type: 'http in', z: SHARED_TAB, name: '', url: `/${READY_PATH}`, method: 'get', upload: false, swaggerDoc: '', x: 100, y: 40, wires: [['diff-ready-set']] },
    { id: 'diff-ready-set', type: 'change', z: SHARED_TAB, name: '', rules: [{ t: 'set', p: 'payload', pt: 'msg', to: READY_BODY, tot: 'str' }], action: '', property: '', from: '', to: '', reg: false, x: 300, y: 40, wires: [['diff-ready-res']] },
    { id: 'diff-ready-res', type: 'http response', z: SHARED_TAB, name: '', statusCode: '', headers: {}, x: 500, y: 40, wires: [] },
  ];
}
