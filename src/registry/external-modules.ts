/**
 * Node-RED's external modules: the npm modules function nodes list in their Setup tab (`libs`) are
 * installed before the flows that need them start, into `<userDir>/externalModules`, a package of
 * its own so they never mix with the node modules installed through the admin API.
 */
import { mkdir } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import type Semver from 'semver';
import { lazy } from '../base/lazy.js';
import type { Logger } from '../base/log.js';
import { SerialQueue } from '../base/serial-queue.js';
import type { Settings } from '../settings/settings.js';
import { ensureUserPackage, runNpm } from './npm.js';
import { isValidPackageName } from './package.js';
import type { SubflowDefinition } from './registry.js';
import { resolveImport } from './resolve-import.js';
import { ModuleRules } from './module-rules.js';

const semver = lazy<typeof Semver>('semver');

export function externalModulesDir(userDir: string): string {
  return path.join(path.resolve(userDir), 'externalModules');
}

/** A module as a function node lists it: `name`, `name/sub/path`, `name@range`, `@scope/name@tag`. */
export interface ModuleSpec {
  spec: string;
  /** The package name. */
  name: string;
  /** What `import` is given: the name and any subpath, without the version. */
  importPath: string;
  version?: string;
}

/** Splits a version off without judging the name: RED.import also receives built-ins and `node:` names. */
export function splitSpec(spec: string): ModuleSpec {
  const at = spec.indexOf('@', 1);
  const importPath = at < 0 ? spec : spec.slice(0, at);
  const parts = importPath.split('/');
  const name = importPath.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return at < 0 ? { spec, name, importPath } : { spec, name, importPath, version: spec.slice(at + 1) };
}

/** `name` or `name/sub/path` with no `.`, `..` or empty segment: nothing can step out of the package. */
export function isPlainImportPath(importPath: string): boolean {
  return !/(^|\/)\.{1,2}(\/|$)|\/\/|\\/.test(importPath);
}

/**
 * Whether npm may be handed the module: a registry name with at most a semver range or a dist-tag.
 * Paths, URLs, `file:`/`npm:`/git specs never reach npm from a flow.
 */
export function isInstallable(m: ModuleSpec): boolean {
  // A leading '-' reads like a flag in every log and shell, as for POST /nodes.
  if (!isValidPackageName(m.name) || /(^|\/)@?-/.test(m.name) || !isPlainImportPath(m.importPath)) return false;
  if (m.version === undefined) return true;
  return m.version !== '' && (semver().validRange(m.version) !== null || /^[a-z][a-z0-9._-]*$/i.test(m.version));
}

/** The error RED.import gives for a module it refuses (Node-RED's code). */
export function notAllowedError(spec: string, reason: string): Error {
  const err = new Error(`Module not allowed: ${spec} (${reason})`) as Error & { code: string };
  err.code = 'module_not_allowed';
  return err;
}

type NodeLike = Record<string, unknown>;

/**
 * The modules the enabled function nodes list, the nodes inside subflow modules included, one per
 * package name (the first spec seen wins, as in Node-RED).
 */
export function listedModules(nodes: Iterable<NodeLike>, subflowOf: (type: string) => SubflowDefinition | undefined): ModuleSpec[] {
  const found = new Map<string, ModuleSpec>();
  const seenTypes = new Set<string>();
  const pending: Iterable<NodeLike>[] = [nodes];
  for (let batch = pending.pop(); batch; batch = pending.pop()) {
    for (const n of batch) {
      if (n === null || typeof n !== 'object' || n.d === true || typeof n.type !== 'string') continue;
      if (n.type === 'function') {
        for (const lib of Array.isArray(n.libs) ? (n.libs as unknown[]) : []) {
          const spec = (lib as { module?: unknown } | null)?.module;
          if (typeof spec !== 'string' || spec === '') continue;
          const m = splitSpec(spec);
          if (!found.has(m.name)) found.set(m.name, m);
        }
      } else if (!seenTypes.has(n.type)) {
        seenTypes.add(n.type);
        const def = subflowOf(n.type);
        if (def) pending.push(def.flow);
      }
    }
  }
  return [...found.values()];
}

export interface ModuleInstallOptions {
  dir: string;
  timeoutMs: number;
  allowScripts: boolean;
  log: Logger;
}

export interface InstallOutcome {
  spec: string;
  /** Why npm did not install it; absent when it did. */
  error?: string;
}

const outcome = (spec: string, error: string | undefined): InstallOutcome => (error === undefined ? { spec } : { spec, error });

/** One npm at a time in this process: concurrent runs in one package would race on its manifest. */
const queue = new SerialQueue();

/**
 * `npm install` of the specs into `dir` (made a package first), in one run. When that run fails
 * for another reason than the time limit, each spec is tried on its own, so one bad module neither
 * hides which one it was nor keeps the others out.
 */
export function installModules(specs: string[], opts: ModuleInstallOptions): Promise<InstallOutcome[]> {
  return queue.run(async () => {
    const { log } = opts;
    await mkdir(opts.dir, { recursive: true });
    await ensureUserPackage(opts.dir);
    log.info({ modules: specs, dir: opts.dir }, `installing ${specs.length} module(s) for function nodes`);
    const together = await npmInstall(specs, opts);
    let outcomes: InstallOutcome[];
    if (together.error === undefined || together.timedOut || specs.length === 1) {
      outcomes = specs.map((spec) => outcome(spec, together.error));
    } else {
      log.info('installing function node modules one at a time to find the failing ones');
      outcomes = [];
      for (const spec of specs) outcomes.push(outcome(spec, (await npmInstall([spec], opts)).error));
    }
    for (const { spec, error } of outcomes) {
      if (error === undefined) log.audit({ event: 'modules.install', module: spec }, 'function node module installed');
      else log.error({ module: spec }, `function node module ${spec} not installed: ${error}`);
    }
    return outcomes;
  });
}

async function npmInstall(specs: string[], opts: ModuleInstallOptions): Promise<{ error?: string; timedOut: boolean }> {
  const args = ['install', '--no-audit', '--no-fund', '--no-update-notifier', '--save', '--omit=dev'];
  if (!opts.allowScripts) args.push('--ignore-scripts');
  args.push('--', ...specs);
  try {
    const result = await runNpm(args, { cwd: opts.dir, timeoutMs: opts.timeoutMs, log: opts.log });
    if (result.timedOut) return { error: `npm did not finish within ${opts.timeoutMs} ms`, timedOut: true };
    if (result.exitCode === 0) return { timedOut: false };
    const notFound = result.errorCode === 'E404' || result.errorCode === 'ETARGET';
    const reason = result.summary ?? `npm exited with code ${result.exitCode}`;
    return { error: notFound ? `not found: ${reason}` : reason, timedOut: false };
  } catch (err) {
    return { error: (err as Error).message, timedOut: false };
  }
}

export interface ExternalModulesHost {
  settings: Settings;
  log: Logger;
  registry: { getSubflowDefinition(type: string): SubflowDefinition | undefined };
}

/**
 * Called before a configuration starts: installs the listed modules that cannot be imported yet.
 * Refusals and failures are logged per module and never stop the deploy; the function node then
 * reports that it could not load the module, as for any other load failure.
 */
export async function ensureFlowModules(host: ExternalModulesHost, nodes: Iterable<NodeLike>): Promise<void> {
  const { settings, log } = host;
  // With the setting off, function nodes refuse their libs themselves.
  if (!settings.functionExternalModules) return;
  const listed = listedModules(nodes, (type) => host.registry.getSubflowDefinition(type));
  if (listed.length === 0) return;
  const modulesSettings = settings.externalModules.modules;
  const policy = new ModuleRules(modulesSettings.allowList, modulesSettings.denyList);
  const dir = externalModulesDir(settings.userDir);
  const missing: string[] = [];
  for (const m of listed) {
    if (!policy.allows(m.name, m.version)) log.warn({ module: m.spec }, `function node module ${m.spec} is not allowed by externalModules.modules`);
    else if (isBuiltin(m.importPath) || resolveImport(m.importPath, dir)) continue;
    else if (!isInstallable(m)) log.warn({ module: m.spec }, `function node module ${m.spec} is not installed: only registry names, with an optional version, are`);
    else missing.push(m.version === undefined ? m.name : `${m.name}@${m.version}`);
  }
  if (missing.length === 0) return;
  if (!modulesSettings.allowInstall) {
    log.warn({ modules: missing }, 'function node modules are missing and externalModules.modules.allowInstall is false');
    return;
  }
  await installModules(missing, {
    dir,
    timeoutMs: modulesSettings.installTimeout,
    allowScripts: settings.externalModules.palette.allowInstallScripts,
    log,
  });
}
