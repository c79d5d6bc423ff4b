import { readFileSync } from 'node:fs';

/** Runnel's own version, from package.json (read once). */
export const RUNNEL_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
