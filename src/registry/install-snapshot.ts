import { cp, lstat, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensureUserPackage } from './npm.js';
import type { NpmContext } from './installer.js';

/** The user dir's files npm rewrites on every install, kept whole. */
const MANIFESTS = ['package.json', 'package-lock.json', path.join('node_modules', '.package-lock.json')];

/**
 * What an install may change, saved before npm runs so a failed, killed or refused install leaves
 * the user dir as it was: the manifest, the lock files, the module's own directory, and the list of
 * entries in node_modules — everything npm adds (the module's dependencies: a refused
 * `@node-red/nodes` brought 167 packages) is removed again. Packages that were there before are
 * not copied (that would cost a copy of node_modules per install); one npm replaced by another
 * version is named in a warning.
 */
export class InstallSnapshot {
  private constructor(
    private readonly ctx: NpmContext,
    private readonly moduleDir: string,
    private readonly files: Map<string, string | null>,
    private readonly entries: Map<string, string | undefined> | null,
    private readonly backup: string | null,
  ) {}

  static async take(ctx: NpmContext, name: string): Promise<InstallSnapshot> {
    const files = new Map<string, string | null>();
    for (const f of MANIFESTS) files.set(f, await readFile(path.join(ctx.userDir, f), 'utf8').catch(() => null));
    await ensureUserPackage(ctx.userDir);
    const entries = await listPackages(path.join(ctx.userDir, 'node_modules'));
    const moduleDir = path.join(ctx.userDir, 'node_modules', name);
    let backup: string | null = null;
    if (await lstat(moduleDir).then(() => true, () => false)) {
      backup = await mkdtemp(path.join(os.tmpdir(), 'runnel-module-backup-'));
      await cp(moduleDir, path.join(backup, 'module'), { recursive: true, verbatimSymlinks: true });
    }
    return new InstallSnapshot(ctx, moduleDir, files, entries, backup);
  }

  async restore(): Promise<void> {
    const nodeModules = path.join(this.ctx.userDir, 'node_modules');
    await rm(this.moduleDir, { recursive: true, force: true });
    if (this.entries === null) {
      await rm(nodeModules, { recursive: true, force: true });
    } else {
      const now = (await listPackages(nodeModules)) ?? new Map<string, string | undefined>();
      const replaced: string[] = [];
      for (const [entry, version] of now) {
        if (!this.entries.has(entry)) await rm(path.join(nodeModules, entry), { recursive: true, force: true });
        else if (version !== this.entries.get(entry) && path.join(nodeModules, entry) !== this.moduleDir) replaced.push(`${entry}@${this.entries.get(entry)} (now ${version})`);
      }
      if (replaced.length) {
        this.ctx.log.warn({ replaced }, `The failed install replaced packages it could not put back: ${replaced.join(', ')}; run npm install in ${this.ctx.userDir} to restore them`);
      }
    }
    for (const [f, content] of this.files) {
      const file = path.join(this.ctx.userDir, f);
      if (content === null) await rm(file, { force: true });
      else await writeFile(file, content);
    }
    if (this.backup) await cp(path.join(this.backup, 'module'), this.moduleDir, { recursive: true, verbatimSymlinks: true });
    await this.discard();
  }

  async discard(): Promise<void> {
    if (this.backup) await rm(this.backup, { recursive: true, force: true });
  }
}

/**
 * The entries of node_modules by path (`name`, `@scope`, `@scope/name`, `.bin`, `.bin/cmd`, …) with
 * each package's version; null when there is no node_modules.
 */
async function listPackages(nodeModules: string): Promise<Map<string, string | undefined> | null> {
  let top: string[];
  try {
    top = await readdir(nodeModules);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const entries = new Map<string, string | undefined>();
  const add = async (entry: string) => entries.set(entry, await versionOf(path.join(nodeModules, entry)));
  for (const name of top) {
    entries.set(name, undefined);
    // A scope and npm's folder of command links hold entries of their own.
    if (!name.startsWith('@') && name !== '.bin') {
      await add(name);
      continue;
    }
    const inner = await readdir(path.join(nodeModules, name)).catch(() => []);
    for (const child of inner) await add(`${name}/${child}`);
  }
  return entries;
}

async function versionOf(dir: string): Promise<string | undefined> {
  try {
    const version = (JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}
