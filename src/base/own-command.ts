import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** bin/runnel.js of this copy of Runnel (dist/src/base/ → the package root). */
const BIN = fileURLToPath(new URL('../../../bin/runnel.js', import.meta.url));

/**
 * How to run one of Runnel's own commands from the working directory, for messages that tell the
 * user to run one: `node bin/runnel.js hash-pw` in Runnel's folder, the full path elsewhere. A
 * bare `runnel` is on PATH only after a global install, and `npx runnel` outside Runnel's folder
 * would fetch whatever package of that name the registry has.
 */
export function ownCommand(command: string): string {
  const relative = path.relative(process.cwd(), BIN);
  return `node ${relative.startsWith('..') || path.isAbsolute(relative) ? BIN : relative} ${command}`;
}
