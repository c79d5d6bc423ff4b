import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../base/log.js';
import { SerialQueue } from '../../base/serial-queue.js';
import type { SharedProjects, StoredProject } from '../../storage/contract.js';
import { git } from '../git.js';
import type { Projects } from '../projects.js';

/** Where the staged files travel between instances: a commit of the index's tree, never a branch. */
const INDEX_REF = 'refs/runnel/index';
const INDEX_IDENTITY = ['-c', 'user.name=Runnel', '-c', 'user.email=runnel@localhost'];

interface CloneState {
  refs: Array<[string, string]>;
  head: string;
  config: Array<[string, string]>;
  /** The staged files' tree; undefined during a merge. */
  tree: string | undefined;
}

/**
 * Projects on a cluster. The database holds each project's repository (its refs, the staged files
 * as a commit under refs/runnel/index, its remotes and upstreams, its credential secret, and per
 * save a `git bundle` of the objects it added) with a version; this instance's projects/ folder
 * holds working clones.
 * Every operation runs here one at a time: it first brings each clone to the stored version
 * (the bundles it lacks unbundled, refs set, reset), then saves each repository it changed on top of the version it
 * started from. A save on top of an older version is refused (`project_version_mismatch`) and the
 * clone goes back to the stored one at the next operation: of two writes at once, one is kept
 * whole and the other is refused whole.
 */
export class SharedRepos {
  private readonly queue = new SerialQueue();
  /** The stored version each clone is at, and what its refs looked like then. */
  private readonly versions = new Map<string, number>();
  private readonly signatures = new Map<string, string>();
  /** The version up to which each clone has the stored objects, and the refs of that version. */
  private readonly have = new Map<string, { version: number; refs: Array<[string, string]> }>();
  private storedActive: string | undefined;

  constructor(private readonly projects: Projects, private readonly store: SharedProjects, private readonly log: Logger) {}

  /**
   * Runs `task` on clones at the stored versions, saves what it changed, then runs `then` (the
   * deploy a switch, pull or checkout makes), which a refused save never reaches.
   */
  run<T>(task: () => Promise<T>, then?: () => Promise<void>): Promise<T> {
    return this.queue.run(async () => {
      await this.pullAll();
      const result = await task();
      await this.pushAll();
      await then?.();
      return result;
    });
  }

  /** Follows what another instance saved. */
  follow(): void {
    this.run(async () => undefined).catch((err: unknown) => this.log.error({ err }, 'following the projects another instance changed failed'));
  }

  private async pullAll(): Promise<void> {
    const { versions, active } = await this.store.versions();
    for (const name of await this.projects.list()) {
      // Only a project this instance saw stored, and that is gone, was removed elsewhere; one it never saw is new here.
      if (versions[name] === undefined && this.versions.has(name)) {
        await this.projects.forget(name);
        this.forgetState(name);
      }
    }
    for (const [name, version] of Object.entries(versions)) {
      if (this.versions.get(name) === version) continue;
      const stored = await this.store.get(name);
      if (stored !== undefined) await this.checkout(stored);
    }
    this.storedActive = active;
    if (active !== undefined && active !== this.projects.active && versions[active] !== undefined) await this.projects.setActive(active);
  }

  private async pushAll(): Promise<void> {
    const local = await this.projects.list();
    for (const name of local) {
      const state = await this.state(name);
      const signature = this.signatureOf(name, state);
      const base = this.versions.get(name) ?? 0;
      if (base !== 0 && this.signatures.get(name) === signature) continue;
      try {
        const { project, bundle } = await this.describe(name, base, state);
        const version = await this.store.save(project, bundle, base);
        this.versions.set(name, version);
        this.signatures.set(name, signature);
        this.have.set(name, { version, refs: project.refs });
      } catch (err) {
        // Reset to the stored repository at the next operation.
        this.versions.set(name, -1);
        throw err;
      }
    }
    for (const [name, base] of this.versions) {
      if (local.includes(name)) continue;
      await this.store.remove(name, base);
      this.forgetState(name);
    }
    if (this.projects.active !== this.storedActive) {
      await this.store.setActive(this.projects.active);
      this.storedActive = this.projects.active;
    }
  }

  private async state(name: string): Promise<CloneState> {
    const dir = this.dirOf(name);
    return { refs: await refsOf(dir), head: await head(dir), config: await settings(dir), tree: await stagedTree(dir) };
  }

  /** What a save would change: the refs but the index's, the checked-out branch, the settings, the staged tree, the entry. */
  private signatureOf(name: string, state: CloneState): string {
    return JSON.stringify([state.refs.filter(([, ref]) => ref !== INDEX_REF), state.head, state.config, state.tree, this.projects.entry(name)]);
  }

  private forgetState(name: string): void {
    this.versions.delete(name);
    this.signatures.delete(name);
    this.have.delete(name);
  }

  /** The project as it is here, and a bundle of the objects the stored version `base` lacks (none when it lacks none). */
  private async describe(name: string, base: number, state: CloneState): Promise<{ project: Omit<StoredProject, 'version'>; bundle: Buffer | undefined }> {
    const dir = this.dirOf(name);
    let refs = state.refs;
    if (state.tree !== undefined) {
      const commit = (await git(dir, [...INDEX_IDENTITY, 'commit-tree', state.tree, '-m', 'staged files'])).stdout.trim();
      await git(dir, ['update-ref', INDEX_REF, commit]);
      refs = [...refs.filter(([, ref]) => ref !== INDEX_REF), [commit, INDEX_REF]];
    }
    const known = base === 0 ? [] : (this.have.get(name)?.refs ?? []).map(([sha]) => sha);
    const bundle = await withTemp(async (file) => {
      try {
        // No delta search: it would compress the flows file against its older versions at every
        // save (seconds for a 10,000-node file); zlib alone keeps the bundle small.
        await git(dir, ['-c', 'pack.window=0', 'bundle', 'create', '-q', file, '--all', ...(known.length > 0 ? ['--not', ...new Set(known)] : [])]);
      } catch (err) {
        // Only refs moved to commits the database has (a branch switched or deleted): no objects to add.
        if (/empty bundle/i.test((err as Error).message)) return undefined;
        throw err;
      }
      return readFile(file);
    });
    const project = { name, refs, head: state.head, config: state.config, entry: this.projects.entry(name) };
    return { project, bundle };
  }

  /** Makes the clone the stored repository: its refs, checked-out branch, settings and staged files; untracked files stay. */
  private async checkout(stored: StoredProject): Promise<void> {
    const dir = this.dirOf(stored.name);
    await mkdir(dir, { recursive: true });
    const fresh = !(await stat(path.join(dir, '.git')).then(() => true, () => false));
    if (fresh) await git(dir, ['init', '-q', '--initial-branch', stored.head]);
    for (const [key] of await settings(dir)) await git(dir, ['config', '--unset-all', key]).catch(() => undefined);
    for (const [key, value] of stored.config) await git(dir, ['config', '--add', key, value]);
    const have = this.have.get(stored.name)?.version ?? 0;
    for (const bundle of await this.store.bundles(stored.name, have)) {
      await withTemp(async (file) => {
        await writeFile(file, bundle);
        await git(dir, ['bundle', 'unbundle', file]);
      });
    }
    const wanted = new Map(stored.refs.map(([sha, ref]) => [ref, sha]));
    const commands = [
      ...(await refsOf(dir)).filter(([, ref]) => !wanted.has(ref)).map(([, ref]) => `delete ${ref}`),
      ...stored.refs.map(([sha, ref]) => `update ${ref} ${sha}`),
    ].map((c) => `option no-deref\n${c}\n`).join('');
    await git(dir, ['update-ref', '--stdin'], {}, { input: commands });
    await git(dir, ['symbolic-ref', 'HEAD', `refs/heads/${stored.head}`]);
    await git(dir, ['reset', '-q', '--hard', 'HEAD']);
    if (await git(dir, ['rev-parse', '-q', '--verify', INDEX_REF]).then(() => true, () => false)) {
      await git(dir, ['read-tree', '-m', '-u', 'HEAD', INDEX_REF]);
    }
    await this.projects.setEntry(stored.name, stored.entry);
    this.have.set(stored.name, { version: stored.version, refs: stored.refs });
    this.versions.set(stored.name, stored.version);
    this.signatures.set(stored.name, this.signatureOf(stored.name, await this.state(stored.name)));
  }

  private dirOf(name: string): string {
    return path.join(this.projects.dir, name);
  }
}

async function refsOf(dir: string): Promise<Array<[string, string]>> {
  const out = (await git(dir, ['for-each-ref', '--format=%(objectname) %(refname)'])).stdout;
  return out.split('\n').filter((l) => l !== '').map((l) => l.split(' ', 2) as [string, string]);
}

/** The checked-out branch, read from .git/HEAD: one git run less on every request. */
async function head(dir: string): Promise<string> {
  return (await readFile(path.join(dir, '.git', 'HEAD'), 'utf8')).trim().replace(/^ref: refs\/heads\//, '');
}

/** The remotes and each branch's upstream, from the clone's own configuration. */
async function settings(dir: string): Promise<Array<[string, string]>> {
  const out = await git(dir, ['config', '--local', '--get-regexp', '^(remote|branch)\\.']).catch(() => ({ stdout: '' }));
  return out.stdout.split('\n').filter((l) => l !== '').map((l) => {
    const space = l.indexOf(' ');
    return space < 0 ? [l, ''] : [l.slice(0, space), l.slice(space + 1)];
  });
}

/** The tree of the staged files; undefined in the middle of a merge, whose unmerged files have none. */
async function stagedTree(dir: string): Promise<string | undefined> {
  return git(dir, ['write-tree']).then((r) => r.stdout.trim(), () => undefined);
}

async function withTemp<T>(work: (file: string) => Promise<T>): Promise<T> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'runnel-bundle-'));
  try {
    return await work(path.join(tmp, 'repo.bundle'));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
