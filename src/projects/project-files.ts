import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { credentialsPathFor } from '../storage/file/flow-pair.js';

/**
 * The files that make a folder a Node-RED project: package.json (whose `node-red.settings` names
 * the flows and credentials files), README.md (the description) and .gitignore, written as
 * Node-RED writes them so a project moves between the two unchanged.
 */

export interface ProjectPackage {
  name?: string;
  description?: string;
  version?: string;
  dependencies?: Record<string, string>;
  'node-red'?: { settings?: { flowFile?: string; credentialsFile?: string } };
  [key: string]: unknown;
}

export function defaultPackage(name: string, summary: string | undefined, flow?: string, credentials?: string): ProjectPackage {
  return {
    name,
    description: summary || 'A Node-RED Project',
    version: '0.0.1',
    dependencies: {},
    'node-red': { settings: flow === undefined ? {} : { flowFile: flow, credentialsFile: credentials ?? path.basename(credentialsPathFor(flow)) } },
  };
}

export function defaultReadme(name: string, summary: string | undefined): string {
  return `${name}\n${'='.repeat(name.length)}\n\n${summary ? `${summary}\n\n` : ''}A Node-RED Project\n`;
}

/** Node-RED's: its own backups stay out of the repository. */
export const GITIGNORE = '*.backup';

/** package.json as a project has it; undefined when it is missing or not JSON. */
export async function readPackage(dir: string): Promise<ProjectPackage | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ProjectPackage) : undefined;
  } catch {
    return undefined;
  }
}

export function packageText(pkg: ProjectPackage): string {
  return JSON.stringify(pkg, null, 4);
}

export async function readReadme(dir: string): Promise<string> {
  return readFile(path.join(dir, 'README.md'), 'utf8').catch(() => '');
}
