import type { Msg } from '../src/runtime/flows/node.js';
import { request, type TestServer } from '../test/helpers/server.js';

export const TAB = 'eco-tab';

/** Outcome of one module, printed as the README table at the end of the run. */
export interface ModuleResult {
  module: string;
  version: string;
  result: string;
}

/** A flow node on the test tab. */
export function flowNode(id: string, type: string, wires: string[][], props: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type, z: TAB, x: 100, y: 100, wires, ...props };
}

/** A `test-capture` node named `name` (see test/helpers/capture.ts). */
export function captureNode(id: string, name: string, wires: string[][] = [], passthrough = false): Record<string, unknown> {
  return flowNode(id, 'test-capture', wires, { name, passthrough });
}

/** Installs a registry module through POST /nodes (the slow part: npm resolves its dependencies). */
export function install(server: TestServer, module: string) {
  return request(server.at('nodes'), { method: 'POST', json: { module }, signal: AbortSignal.timeout(240_000) });
}

/** Hands a message to a live node's input, as a wire would. */
export function inject(server: TestServer, id: string, msg: Msg): void {
  const node = server.instance.runtime.services.nodes.get(id);
  if (!node) throw new Error(`node ${id} is not running`);
  node.receive(msg);
}

/** The README table. */
export function table(results: ModuleResult[]): string {
  const rows = results.map((r) => `| ${r.module} | ${r.version} | ${r.result} |`);
  return ['| module | version | result |', '|---|---|---|', ...rows].join('\n');
}
