import type { Settings } from '../settings/settings.js';

/**
 * Node-RED's `nodesIncludes` and `nodesExcludes`, as its registry applies them: to a core node's
 * file name (`90-exec.js`) and to a module's directory name (within its scope). With
 * `nodesIncludes` set, only what it names is loaded — core files included — and `nodesExcludes`
 * still leaves out what it names. Undefined when loaded, else the setting that leaves it out.
 */
export function leftOutBy(settings: Pick<Settings, 'nodesIncludes' | 'nodesExcludes'>, name: string): 'nodesIncludes' | 'nodesExcludes' | undefined {
  if (settings.nodesIncludes !== undefined && !settings.nodesIncludes.includes(name)) return 'nodesIncludes';
  if (settings.nodesExcludes.includes(name)) return 'nodesExcludes';
  return undefined;
}
