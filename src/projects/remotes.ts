import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../base/errors.js';
import { git } from './git.js';
import { checkRef, checkRemoteUrl } from './names.js';
import { identity, type GitUser } from './repository.js';

/**
 * A working copy's remotes: adding and removing them, fetch, push, pull (with setUpstream and
 * allowUnrelatedHistories), clone, and how far a branch is ahead of or behind its remote one.
 * `env` carries a remote's credentials to git (see remote-auth.ts), never its arguments.
 */

export async function addRemote(dir: string, name: unknown, url: unknown): Promise<void> {
  await git(dir, ['remote', 'add', '--', checkRef(name, 'The remote name'), checkRemoteUrl(url)]);
}

export async function removeRemote(dir: string, name: string): Promise<void> {
  await git(dir, ['remote', 'remove', '--', checkRef(name, 'The remote name')]);
}

export async function fetchRemote(dir: string, remote: string, env: NodeJS.ProcessEnv): Promise<void> {
  await git(dir, ['fetch', '--', checkRef(remote, 'The remote name')], env);
}

/** Pushes HEAD to `branch` on `remote` (its upstream when `branch` is undefined); `track` sets the upstream. */
export async function push(dir: string, remote: string, branch: string | undefined, track: boolean, env: NodeJS.ProcessEnv): Promise<void> {
  const args = ['push', ...(track && branch ? ['-u'] : []), '--porcelain', '--', checkRef(remote, 'The remote name')];
  if (branch !== undefined) args.push(`HEAD:${checkRef(branch, 'The branch')}`);
  await git(dir, args, env);
}

export interface PullOptions {
  remote?: string;
  branch?: string;
  allowUnrelatedHistories: boolean;
  user?: GitUser;
}

/** Merges the remote branch (the upstream when none is named); a conflict leaves the merge in progress. */
export async function pull(dir: string, options: PullOptions, env: NodeJS.ProcessEnv): Promise<void> {
  const args = [...identity(options.user), 'pull', '--no-rebase', ...(options.allowUnrelatedHistories ? ['--allow-unrelated-histories'] : [])];
  if (options.remote !== undefined && options.branch !== undefined) args.push('--', checkRef(options.remote, 'The remote name'), checkRef(options.branch, 'The branch'));
  await git(dir, args, env);
}

export async function setUpstream(dir: string, remoteBranch: string): Promise<void> {
  await git(dir, ['branch', `--set-upstream-to=${checkRef(remoteBranch, 'The remote branch')}`]);
}

/** The current branch's upstream (`origin/main`), or undefined when it has none. */
export async function upstream(dir: string): Promise<string | undefined> {
  try {
    return (await git(dir, ['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{u}'])).stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function branchStatus(dir: string, remoteBranch: string): Promise<{ commits: { ahead: number; behind: number } }> {
  const ref = checkRef(remoteBranch, 'The remote branch');
  const count = async (range: string[]) => Number((await git(dir, ['rev-list', '--count', ...range, '--'])).stdout.trim());
  return { commits: { ahead: await count(['HEAD', `^${ref}`]), behind: await count([`^HEAD`, ref]) } };
}

/**
 * Clones into `dir` (empty); the remote is called `remote`. Git has no size bound for a clone, so
 * the folder is measured while it grows and git is stopped past `maxBytes`: a huge repository must
 * not fill the user dir's disk.
 */
export async function clone(dir: string, url: unknown, remote: string, branch: string | undefined, env: NodeJS.ProcessEnv, maxBytes: number): Promise<void> {
  const args = ['clone', '-q', '-o', checkRef(remote, 'The remote name'), ...(branch === undefined ? [] : ['-b', checkRef(branch, 'The branch')]), '--', checkRemoteUrl(url), '.'];
  const stop = new AbortController();
  let measuring = false;
  const watch = setInterval(() => {
    if (measuring) return;
    measuring = true;
    void sizeOf(dir).then((bytes) => {
      if (bytes > maxBytes) stop.abort();
    }).finally(() => (measuring = false));
  }, CLONE_CHECK_MS);
  const tooLarge = () => new RunnelError('git_clone_too_large', `The repository is larger than ${maxBytes} bytes (editorTheme.projects.maxCloneSize): the clone was stopped`);
  try {
    await git(dir, args, env, { signal: stop.signal });
  } catch (err) {
    throw stop.signal.aborted ? tooLarge() : err;
  } finally {
    clearInterval(watch);
  }
  // A clone quicker than one measurement is measured once done.
  if (await sizeOf(dir) > maxBytes) throw tooLarge();
}

const CLONE_CHECK_MS = 200;

/** Bytes of the files under `dir`; files that vanish meanwhile (git's temporary ones) count nothing. */
async function sizeOf(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const sizes = await Promise.all(entries.filter((e) => e.isFile()).map((e) => stat(path.join(e.parentPath, e.name)).then((s) => s.size, () => 0)));
  return sizes.reduce((a, b) => a + b, 0);
}

/** `origin/feature/x` with remotes `origin` and `origin/feature` is remote `origin/feature`, branch `x`: the longest remote name wins. */
export function splitRemoteBranch(remoteBranch: string, remotes: string[]): { remote: string; branch: string } {
  const remote = remotes.filter((r) => remoteBranch.startsWith(`${r}/`)).sort((a, b) => b.length - a.length)[0];
  if (remote === undefined) throw new RunnelError('git_invalid_argument', `${remoteBranch} names no remote of the project`);
  return { remote, branch: remoteBranch.slice(remote.length + 1) };
}
