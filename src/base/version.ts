import { readFileSync } from 'node:fs';

/** Runnel's own version, from package.json (read once). */
export const RUNNEL_VERSION: string = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The Node-RED version Runnel presents to modules (`"node-red": {"version": ">=3"}` checks). */
export const NODE_RED_COMPAT_VERSION = '4.1.15';
