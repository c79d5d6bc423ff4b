import { copyFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import type Semver from 'semver';
import { lazy } from '../base/lazy.js';
import { nodeRedModulesIn } from '../registry/loader.js';
import { readNodeModulePackage } from '../registry/package.js';
import { writeFileAtomic } from '../storage/atomic-file.js';

/**
 * The node modules of an exported folder. Node-RED loads the Node-RED modules it finds in the user
 * dir's `node_modules` at start, and stops every flow that uses a type none provides ("waiting for
 * missing types"); a fresh folder has no `node_modules`. So the export lists the user dir's
 * modules in the folder's `package.json`, the file Node-RED's own palette installs into, for
 * `npm install` there to bring them. Node-RED scans `node_modules` at every start and writes its
 * `.config.nodes.json` itself; the user dir's goes along when there is one, for the node sets
 * disabled there (on Node-RED or on Runnel) to stay disabled.
 */

const PACKAGE_FILE = 'package.json';
const NODES_FILE = '.config.nodes.json';
/** Only an export needs it, not every start that loads the command line. */
const semver = lazy<typeof Semver>('semver');

type Manifest = Record<string, unknown> & { dependencies?: Record<string, unknown> };

/**
 * Adds the user dir's installed Node-RED modules to `dir`/package.json (created as Node-RED creates
 * it when missing); their names, or none when the user dir has no modules.
 */
export async function exportNodeModules(userDir: string, dir: string): Promise<string[]> {
  const installed = await installedModules(userDir);
  if (installed.size === 0) return [];
  const file = path.join(dir, PACKAGE_FILE);
  const manifest = (await readManifest(file)) ?? { name: 'node-red-project', description: 'A Node-RED Project', version: '0.0.1', private: true };
  manifest.dependencies = { ...manifest.dependencies, ...Object.fromEntries(installed) };
  await writeFileAtomic(file, `${JSON.stringify(manifest, null, 4)}\n`, { backup: true });
  return [...installed.keys()];
}

/** Copies the user dir's `.config.nodes.json` into `dir`; its name, or undefined when there is none. */
export async function exportNodeSetFlags(userDir: string, dir: string): Promise<string | undefined> {
  try {
    await copyFile(path.join(userDir, NODES_FILE), path.join(dir, NODES_FILE));
    return NODES_FILE;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Name → what `npm install` should fetch: the installed version, or for a module the user dir's
 * package.json has from a file, tarball or URL that spec (a `file:` path made absolute, since the
 * folder is elsewhere). Modules npm
 * brought in as another module's dependency come along with that module and are not listed.
 */
async function installedModules(userDir: string): Promise<Map<string, string>> {
  const own = (await readManifest(path.join(userDir, PACKAGE_FILE)))?.dependencies ?? {};
  const listed = Object.keys(own).length > 0;
  const out = new Map<string, string>();
  for (const moduleDir of await nodeRedModulesIn(path.join(userDir, 'node_modules'))) {
    const pkg = await readNodeModulePackage(moduleDir).catch(() => undefined);
    if (!pkg || (listed && !Object.hasOwn(own, pkg.name))) continue;
    const spec = own[pkg.name];
    out.set(pkg.name, typeof spec === 'string' && semver().validRange(spec) === null ? rebase(spec, userDir) : pkg.version);
  }
  return out;
}

function rebase(spec: string, from: string): string {
  if (!spec.startsWith('file:')) return spec;
  const target = spec.slice('file:'.length);
  return path.isAbsolute(target) ? spec : `file:${path.resolve(from, target)}`;
}

async function readManifest(file: string): Promise<Manifest | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Manifest) : undefined;
  } catch {
    return undefined;
  }
}
