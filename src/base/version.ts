import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Runnel's own version, from package.json (read once). */
export const RUNNEL_VERSION: string = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The Node-RED version Runnel presents to modules (`"node-red": {"version": ">=3"}` checks) and to
 * the editor: the version of the `@node-red/editor-client` it serves, so the two never disagree.
 */
export const NODE_RED_COMPAT_VERSION: string = (createRequire(import.meta.url)('@node-red/editor-client/package.json') as { version: string }).version;
