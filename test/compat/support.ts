import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** test/fixtures/compat in the source tree (fixtures are not compiled; they are loaded in place, read-only). */
export const COMPAT_FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/compat');

export const TAB = 'compat-tab';

/** A flow node on the test tab. */
export function flowNode(id: string, type: string, wires: string[][] = [], props: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type, z: TAB, x: 100, y: 100, wires, ...props };
}

/** A `test-capture` node (test/helpers/capture.ts) named `name`. */
export function capture(id: string, name: string, wires: string[][] = []): Record<string, unknown> {
  return flowNode(id, 'test-capture', wires, { name });
}

