import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../base/errors.js';

/** The parts of a module's package.json the loader uses. */
export interface NodeModulePackage {
  name: string;
  version: string;
  /** `"type": "module"` makes plain `.js` files ESM. */
  esm: boolean;
  /** `node-red.nodes`: set name → file, relative to the module directory. */
  nodes: Record<string, string>;
  /** `node-red.plugins`: plugin set name → file, loaded before the node sets. */
  plugins: Record<string, string>;
  /** `node-red.version`: the Node-RED range the module supports. */
  range?: string;
  /** `node-red.dependencies`: Node-RED modules that must load first. */
  dependencies: string[];
  /** What npm would install for it: name → spec from dependencies, optionalDependencies and peerDependencies. */
  npmDependencies: [string, unknown][];
}

/** npm's rules for a package name (lower case, optional scope, URL-safe characters). */
const PACKAGE_NAME = /^(?:@[a-z0-9-*~][a-z0-9-*._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

export function isValidPackageName(name: string): boolean {
  return name.length > 0 && name.length <= 214 && PACKAGE_NAME.test(name);
}

/** Validates a parsed package.json; `where` names it in error messages. */
export function parseNodeModulePackage(pkg: unknown, where: string): NodeModulePackage {
  const p = pkg as Record<string, unknown> | null;
  const nr = p && typeof p === 'object' ? (p['node-red'] as Record<string, unknown> | undefined) : undefined;
  if (!p || !nr || typeof nr !== 'object' || Array.isArray(nr)) {
    throw new RunnelError('not_node_module', `${where} has no "node-red" section in its package.json`);
  }
  if (typeof p.name !== 'string' || !isValidPackageName(p.name)) throw new RunnelError('invalid_module_name', `${where} has an invalid package name`);
  const nodes = fileMap(nr.nodes, 'nodes', where);
  const plugins = fileMap(nr.plugins, 'plugins', where);
  const deps = nr.dependencies;
  return {
    name: p.name,
    version: typeof p.version === 'string' ? p.version : '0.0.0',
    esm: p.type === 'module',
    nodes,
    plugins,
    range: typeof nr.version === 'string' ? nr.version : undefined,
    dependencies: Array.isArray(deps) ? deps.filter((d): d is string => typeof d === 'string') : [],
    npmDependencies: ['dependencies', 'optionalDependencies', 'peerDependencies'].flatMap((key) => {
      const section = p[key];
      return section && typeof section === 'object' && !Array.isArray(section) ? Object.entries(section) : [];
    }),
  };
}

/** `node-red.nodes` / `node-red.plugins`: set name → file. */
function fileMap(raw: unknown = {}, key: string, where: string): Record<string, string> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new RunnelError('invalid_module', `${where}: "node-red.${key}" must map set names to files`);
  }
  const files: Record<string, string> = {};
  for (const [set, file] of Object.entries(raw)) {
    if (typeof file !== 'string' || file.length === 0) throw new RunnelError('invalid_module', `${where}: ${key} set ${set} has no file`);
    files[set] = file;
  }
  return files;
}

/** Reads `<dir>/package.json`; 404 `not_node_module` when it is missing or has no node-red section. */
export async function readNodeModulePackage(dir: string): Promise<NodeModulePackage> {
  let text: string;
  try {
    text = await readFile(path.join(dir, 'package.json'), 'utf8');
  } catch {
    throw new RunnelError('not_node_module', `${dir} has no package.json`);
  }
  let pkg: unknown;
  try {
    pkg = JSON.parse(text);
  } catch {
    throw new RunnelError('invalid_module', `${dir}/package.json is not valid JSON`);
  }
  return parseNodeModulePackage(pkg, dir);
}
