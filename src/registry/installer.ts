import path from 'node:path';
import type Semver from 'semver';
import { lazy } from '../base/lazy.js';

const semver = lazy<typeof Semver>('semver');
import type { Logger } from '../base/log.js';
import type { PaletteSettings } from '../settings/settings.js';
import { RunnelError } from '../base/errors.js';
import { isValidPackageName, type NodeModulePackage } from './package.js';
import { runNpm } from './npm.js';
import { ModuleRules } from './module-rules.js';

/** Names npm's own validator refuses although they match the character rules. */
const NPM_RESERVED = new Set(['node_modules', 'favicon.ico']);

export type InstallTarget = { kind: 'registry'; name: string; version?: string } | { kind: 'path'; dir: string };

/**
 * Reads the `module` field of POST /nodes: a registry package name or an absolute directory path.
 * npm specifiers (`name@1.2.3`, URLs, tarball paths) are refused so npm never sees anything but a
 * plain name or a directory.
 */
export function parseInstallTarget(module: string, version: string | undefined): InstallTarget {
  const invalid = () => new RunnelError('invalid_module_name', `Invalid module name: ${module}`);
  const versioned = /^((?:@[^/@\s]+\/)?[^/@\s]+)@([^\s]+)$/.exec(module);
  if (versioned && isValidPackageName(versioned[1]) && version === undefined) {
    throw new RunnelError('invalid_module_name', `Invalid module name: ${module}: the version has its own field, {"module": ${JSON.stringify(versioned[1])}, "version": ${JSON.stringify(versioned[2])}}`);
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(module) && !/^[a-zA-Z]:[\\/]/.test(module)) throw invalid();
  if (/\.(tgz|tar|tar\.gz)$/i.test(module)) throw invalid();
  if (path.isAbsolute(module)) return { kind: 'path', dir: path.normalize(module) };
  // npm accepts names starting with '-', but such a name reads like a flag in every log and shell.
  if (!isValidPackageName(module) || /(^|\/)@?-/.test(module) || NPM_RESERVED.has(module)) throw invalid();
  if (version !== undefined && !(semver().valid(version) || semver().validRange(version))) {
    throw new RunnelError('invalid_request', `Invalid version: ${version}`);
  }
  return { kind: 'registry', name: module, version };
}

/**
 * Checks what an uploaded or local module's package.json would make npm do, before npm runs: the
 * version must be valid semver (it becomes part of a file name: `1.0.0/../../x` once wrote
 * outside the user dir), and every dependency must come from the registry — a `file:`/`link:`
 * path, git repository or URL dependency (`file:/etc` installed a symlink to /etc) is refused
 * unless `externalModules.palette.allowNonRegistryDependencies` is set.
 */
export function assertInstallableManifest(pkg: NodeModulePackage, palette: PaletteSettings): void {
  if (semver().valid(pkg.version) !== pkg.version) {
    throw new RunnelError('invalid_module', `The module's version ${JSON.stringify(pkg.version).slice(0, 80)} is not a valid semver version`);
  }
  if (palette.allowNonRegistryDependencies) return;
  for (const [name, spec] of pkg.npmDependencies) {
    if (!isRegistrySpec(spec)) {
      throw new RunnelError(
        'dependency_not_allowed',
        `Dependency ${name.slice(0, 100)}@${String(spec).slice(0, 100)} is not from the registry (file:, link:, git or URL dependencies are refused unless externalModules.palette.allowNonRegistryDependencies is true)`,
      );
    }
  }
}

/** A semver range, a dist-tag, or an `npm:` alias of one: the forms npm resolves through the registry. */
function isRegistrySpec(spec: unknown): boolean {
  if (typeof spec !== 'string') return false;
  const aliased = /^npm:((?:@[^/@\s]+\/)?[^/@\s]+)(?:@(.*))?$/.exec(spec);
  if (aliased) return isValidPackageName(aliased[1]) && isRegistrySpec(aliased[2] ?? '');
  const s = spec.trim();
  if (s === '' || s === '*' || semver().validRange(s) !== null) return true;
  // A dist-tag (`latest`, `next`): a plain word, never a path, URL or `user/repo` shorthand.
  return /^[A-Za-z][A-Za-z0-9._-]*$/.test(s);
}

/**
 * The palette's allowList and denyList, checked before npm runs, with Node-RED's rules (see
 * ModuleRules). `version` is what Node-RED checks a `name@range` rule against: the version an
 * upload or the registry resolves to; a local path is checked by name alone, as in Node-RED.
 */
export function assertAllowed(name: string, palette: PaletteSettings, version?: string): void {
  if (!new ModuleRules(palette.allowList, palette.denyList).allows(name, version)) {
    throw new RunnelError('install_not_allowed', `Installing ${name}${version ? `@${version}` : ''} is not allowed by this runtime's settings`);
  }
}

/**
 * The palette lists for an install by name from the registry. When a rule names a version range,
 * the version npm would install is asked of the registry first, as Node-RED does: a range in the
 * request is checked by what it resolves to.
 */
export async function assertRegistryInstallAllowed(name: string, version: string | undefined, ctx: NpmContext): Promise<void> {
  const rules = new ModuleRules(ctx.palette.allowList, ctx.palette.denyList);
  if (rules.allowsAll) return;
  assertAllowed(name, ctx.palette, rules.versioned ? await registryVersion(name, version, ctx) : version);
}

async function registryVersion(name: string, version: string | undefined, ctx: NpmContext): Promise<string> {
  if (version !== undefined && semver().valid(version)) return version;
  const spec = version === undefined ? name : `${name}@${version}`;
  const out: string[] = [];
  const onLine = (line: string, stream: 'out' | 'err') => stream === 'out' && out.push(line);
  const result = await runNpm(['view', '--json', '--', spec, 'version'], { cwd: ctx.userDir, timeoutMs: ctx.palette.installTimeout, log: ctx.log, onLine });
  if (result.timedOut) throw new RunnelError('install_timeout', `Asking the registry for ${spec} did not finish within ${ctx.palette.installTimeout} ms`);
  if (result.exitCode === 0 && out.length > 0) {
    // One version, or every version a range matches, lowest first.
    const found = parseJson(out.join('\n'));
    const last: unknown = Array.isArray(found) ? found[found.length - 1] : found;
    if (typeof last === 'string') return last;
  }
  if (result.exitCode === 0 || result.errorCode === 'E404' || result.errorCode === 'ETARGET') throw new RunnelError('not_found', `Module not found: ${result.summary ?? spec}`);
  throw new RunnelError('install_failed', `Install failed: ${result.summary ?? `npm exited with code ${result.exitCode}`}`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Node-RED's rule for installing a module that is already there (an upgrade, or a reinstall):
 * `allowUpdate: false` refuses every one; otherwise `allowUpdateList`/`denyUpdateList` as Node-RED
 * reads them, checked without a version (as in Node-RED: a rule's `@range` does not narrow it).
 */
export function assertUpdateAllowed(name: string, palette: PaletteSettings): void {
  const rules = new ModuleRules(palette.allowUpdateList, palette.denyUpdateList);
  if (palette.allowUpdate && (rules.allowsAll || rules.allows(name))) return;
  throw new RunnelError('update_not_allowed', `Updating ${name} is not allowed by this runtime's settings`);
}

export interface NpmContext {
  userDir: string;
  palette: PaletteSettings;
  log: Logger;
  /** npm's output lines, for the editor's event log. */
  onLine?: (line: string, stream: 'out' | 'err') => void;
}

/** `npm install <spec>` in the user dir; a RunnelError when npm fails or runs out of time. */
export async function npmInstall(spec: string, ctx: NpmContext): Promise<void> {
  const args = ['install', '--no-audit', '--no-fund', '--no-update-notifier', '--save', '--save-prefix=~', '--omit=dev'];
  if (!ctx.palette.allowInstallScripts) args.push('--ignore-scripts');
  args.push('--', spec);
  const result = await runNpm(args, { cwd: ctx.userDir, timeoutMs: ctx.palette.installTimeout, log: ctx.log, onLine: ctx.onLine });
  if (result.timedOut) throw new RunnelError('install_timeout', `Installing ${spec} did not finish within ${ctx.palette.installTimeout} ms`);
  if (result.exitCode === 0) return;
  if (result.errorCode === 'E404' || result.errorCode === 'ETARGET') {
    throw new RunnelError('not_found', `Module not found: ${result.summary ?? spec}`);
  }
  throw new RunnelError('install_failed', `Install failed: ${result.summary ?? `npm exited with code ${result.exitCode}`}`);
}

export async function npmUninstall(name: string, ctx: NpmContext): Promise<void> {
  const args = ['uninstall', '--no-audit', '--no-fund', '--no-update-notifier', '--save', '--', name];
  const result = await runNpm(args, { cwd: ctx.userDir, timeoutMs: ctx.palette.installTimeout, log: ctx.log, onLine: ctx.onLine });
  if (result.timedOut) throw new RunnelError('install_timeout', `Removing ${name} did not finish within ${ctx.palette.installTimeout} ms`);
  if (result.exitCode !== 0) throw new RunnelError('uninstall_failed', `Uninstall failed: ${result.summary ?? `npm exited with code ${result.exitCode}`}`);
}
