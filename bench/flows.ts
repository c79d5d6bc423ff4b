/**
 * Generators for Node-RED-format flow configurations. Only node types that both systems ship
 * are used (tab, inject, change, function, debug, http in, http response), with the property
 * names Node-RED's editor writes, so the same JSON deploys unchanged on both.
 */

export interface FlowNode {
  id: string;
  type: string;
  z?: string;
  wires?: string[][];
  [key: string]: unknown;
}

/** Deterministic 16-hex-digit ids, the shape Node-RED's editor generates. */
export class IdSource {
  private next = 1;
  constructor(private readonly prefix: number) {}
  id(): string {
    return (this.prefix * 0x10000000 + this.next++).toString(16).padStart(16, '0');
  }
}

const CHAIN_LENGTH = 10;
const NODES_PER_TAB = 1000;

export function tab(id: string, label: string): FlowNode {
  return { id, type: 'tab', label, disabled: false, info: '', env: [] };
}

function at(x: number, y: number) {
  return { x: 120 + x * 180, y: 40 + y * 60 };
}

export function inject(id: string, z: string, wires: string[], pos: [number, number], once = false): FlowNode {
  return {
    id, type: 'inject', z, name: '',
    props: [{ p: 'payload' }, { p: 'topic', vt: 'str' }],
    repeat: '', crontab: '', once, onceDelay: 0.1, topic: '', payload: '', payloadType: 'date',
    ...at(...pos), wires: [wires],
  };
}

/** A change node that sets msg.payload to a string. */
export function change(id: string, z: string, value: string, wires: string[], pos: [number, number]): FlowNode {
  return {
    id, type: 'change', z, name: '',
    rules: [{ t: 'set', p: 'payload', pt: 'msg', to: value, tot: 'str' }],
    action: '', property: '', from: '', to: '', reg: false,
    ...at(...pos), wires: [wires],
  };
}

export function fn(id: string, z: string, body: string, wires: string[][], pos: [number, number]): FlowNode {
  return {
    id, type: 'function', z, name: '', func: body, outputs: wires.length,
    timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [],
    ...at(...pos), wires,
  };
}

export function debug(id: string, z: string, pos: [number, number]): FlowNode {
  return {
    id, type: 'debug', z, name: '', active: false, tosidebar: true, console: false, tostatus: false,
    complete: 'false', statusVal: '', statusType: 'auto', targetType: 'msg',
    ...at(...pos), wires: [],
  };
}

export function httpIn(id: string, z: string, url: string, wires: string[], pos: [number, number]): FlowNode {
  return {
    id, type: 'http in', z, name: '', url, method: 'get', upload: false, swaggerDoc: '',
    ...at(...pos), wires: [wires],
  };
}

export function httpResponse(id: string, z: string, pos: [number, number]): FlowNode {
  return { id, type: 'http response', z, name: '', statusCode: '', headers: {}, ...at(...pos), wires: [] };
}

/** Function body that answers a constant string. */
export function answer(body: string): string {
  return `msg.payload = ${JSON.stringify(body)};\nreturn msg;`;
}

/** http in → function (answers `body`) → http response. The function node's id is `functionId`. */
export function probe(ids: IdSource, z: string, url: string, body: string, row: number) {
  const [inId, fnId, outId] = [ids.id(), ids.id(), ids.id()];
  const nodes = [
    httpIn(inId, z, url, [fnId], [0, row]),
    fn(fnId, z, answer(body), [[outId]], [1, row]),
    httpResponse(outId, z, [2, row]),
  ];
  return { nodes, functionId: fnId };
}

/** inject → (change, function)… → debug, `length` nodes; the pass-through nodes do trivial work. */
function chain(ids: IdSource, z: string, length: number, row: number): FlowNode[] {
  const chainIds = Array.from({ length }, () => ids.id());
  return chainIds.map((id, i) => {
    const next = i + 1 < length ? [chainIds[i + 1]] : [];
    const pos: [number, number] = [i, row];
    if (i === 0) return inject(id, z, next, pos);
    if (i === length - 1) return debug(id, z, pos);
    return i % 2 === 1 ? change(id, z, `step ${i}`, next, pos) : fn(id, z, 'return msg;', [next], pos);
  });
}

export interface BenchConfig {
  flows: FlowNode[];
  /** Id of the function node behind the probe; changing its body changes what the probe answers. */
  probeFunctionId: string;
}

/**
 * `total` flow nodes (tabs not counted): inject→…→debug chains of ten nodes, a thousand nodes per
 * tab, and last of all an http-in probe at `probeUrl` answering `probeBody`. The probe comes last
 * because runtimes start nodes in config order: when it answers, everything before it has started.
 */
export function benchConfig(total: number, probeUrl: string, probeBody: string): BenchConfig {
  const PROBE_SIZE = 3;
  if (total < PROBE_SIZE) throw new Error(`a bench config needs at least ${PROBE_SIZE} nodes`);
  const ids = new IdSource(1);
  const flows: FlowNode[] = [];
  let z = '';
  let onTab = NODES_PER_TAB;
  let tabs = 0;
  let row = 0;
  const room = (needed: number) => {
    if (onTab + needed > NODES_PER_TAB) {
      z = ids.id();
      flows.push(tab(z, `Bench ${++tabs}`));
      onTab = 0;
      row = 0;
    }
  };
  let left = total - PROBE_SIZE;
  while (left > 0) {
    room(1);
    const length = Math.min(CHAIN_LENGTH, left, NODES_PER_TAB - onTab);
    flows.push(...(length >= 2 ? chain(ids, z, length, row++) : [debug(ids.id(), z, [0, row++])]));
    onTab += length;
    left -= length;
  }
  room(PROBE_SIZE);
  const p = probe(ids, z, probeUrl, probeBody, row);
  flows.push(...p.nodes);
  return { flows, probeFunctionId: p.functionId };
}

/** The same config with the probe's function node answering `body` instead. */
export function withProbeBody(config: BenchConfig, body: string): FlowNode[] {
  return config.flows.map((n) => (n.id === config.probeFunctionId ? { ...n, func: answer(body) } : n));
}

/**
 * http in → `length` nodes → http response. The first node is a change node setting the body;
 * the rest alternate function (`return msg;`) and change (setting the same body again).
 */
export function httpChainFlow(length: number, url: string, body: string): FlowNode[] {
  const ids = new IdSource(2);
  const z = ids.id();
  const inId = ids.id();
  const middle = Array.from({ length }, () => ids.id());
  const outId = ids.id();
  const nodes: FlowNode[] = [tab(z, 'HTTP chain'), httpIn(inId, z, url, [middle[0]], [0, 0])];
  middle.forEach((id, i) => {
    const next = [middle[i + 1] ?? outId];
    const pos: [number, number] = [i + 1, 0];
    nodes.push(i % 2 === 0 ? change(id, z, body, next, pos) : fn(id, z, 'return msg;', [next], pos));
  });
  nodes.push(httpResponse(outId, z, [length + 1, 0]));
  return nodes;
}

/**
 * http in → function answering after `delayMs` → http response. `version` changes only a comment in
 * the function, so every version is a different flow answering the same body.
 */
export function slowAnswerFlow(version: number, url: string, body: string, delayMs: number): FlowNode[] {
  const ids = new IdSource(5);
  const [z, inId, fnId, outId] = [ids.id(), ids.id(), ids.id(), ids.id()];
  const func = `// version ${version}\nsetTimeout(() => { msg.payload = ${JSON.stringify(body)}; node.send(msg); }, ${delayMs});\nreturn null;`;
  return [tab(z, 'Deploy under load'), httpIn(inId, z, url, [fnId], [0, 0]), fn(fnId, z, func, [[outId]], [1, 0]), httpResponse(outId, z, [2, 0])];
}

/**
 * One inject (once, shortly after deploy) starts a message round a ring of `ringSize` function
 * nodes; every hop counts, and after `messages` hops the message leaves the ring. Start and end
 * times are kept in global context (in-process clock) and served as JSON at `resultUrl`.
 */
export function messageLoopFlow(messages: number, ringSize: number, resultUrl: string): FlowNode[] {
  const ids = new IdSource(3);
  const z = ids.id();
  const [injectId, startId, doneId, resultInId, resultFnId, resultOutId] = Array.from({ length: 6 }, () => ids.id());
  const ring = Array.from({ length: ringSize }, () => ids.id());
  const hop =
    `msg.count++;\nif (msg.count >= ${messages}) { return [null, msg]; }\nreturn [msg, null];`;
  return [
    tab(z, 'Message loop'),
    inject(injectId, z, [startId], [0, 0], true),
    fn(startId, z, 'msg.count = 0;\nglobal.set("benchStart", Date.now());\nreturn msg;', [[ring[0]]], [1, 0]),
    ...ring.map((id, i) => fn(id, z, hop, [[ring[(i + 1) % ringSize]], [doneId]], [2 + i, 1])),
    fn(doneId, z, 'global.set("benchEnd", Date.now());\nglobal.set("benchCount", msg.count);\nreturn null;', [[]], [2, 2]),
    httpIn(resultInId, z, resultUrl, [resultFnId], [0, 3]),
    fn(
      resultFnId, z,
      'msg.payload = { start: global.get("benchStart"), end: global.get("benchEnd"), count: global.get("benchCount") };\nreturn msg;',
      [[resultOutId]], [1, 3],
    ),
    httpResponse(resultOutId, z, [2, 3]),
  ];
}
