import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../base/errors.js';
import { git } from './git.js';
import { checkProjectFile, checkRef, checkTreeish } from './names.js';
import {
  LOG_FORMAT, applyStatus, parseBranches, parseFileList, parseLog, parseRemotes,
  type Branch, type Commit, type FileEntry, type StatusBranches, type StatusCommits,
} from './git-parse.js';

/** Who a commit is by: the editor user's git settings (GET/PUT /settings/user `git.user`). */
export interface GitUser {
  name?: string;
  email?: string;
}

export interface RepoStatus {
  files: Record<string, FileEntry>;
  commits: StatusCommits;
  branches: StatusBranches;
  merging?: boolean;
}

/**
 * One project's working copy and the git operations the editor asks for on it. Paths a client
 * names are checked to stay inside the folder; refs are checked against git's rules.
 */
export class Repository {
  constructor(readonly dir: string) {}

  private run(args: string[], env?: NodeJS.ProcessEnv) {
    return git(this.dir, args, env);
  }

  async init(): Promise<void> {
    await this.run(['init', '--initial-branch', 'main']);
  }

  async status(): Promise<RepoStatus> {
    const commits: StatusCommits = { total: await this.commitCount() };
    const files = parseFileList((await this.run(['ls-files', '--cached', '--others', '--exclude-standard'])).stdout);
    const branches: StatusBranches = {};
    applyStatus((await this.run(['status', '--porcelain', '-b'])).stdout, files, branches, commits);
    const merging = await this.isMerging();
    return { files, commits, branches, ...(merging ? { merging } : {}) };
  }

  async isMerging(): Promise<boolean> {
    return stat(path.join(this.dir, '.git', 'MERGE_HEAD')).then(() => true, () => false);
  }

  private async commitCount(): Promise<number> {
    try {
      return Number((await this.run(['rev-list', '--count', 'HEAD'])).stdout.trim());
    } catch {
      // No commit yet: HEAD names nothing.
      return 0;
    }
  }

  /** A file as it is in a commit or merge stage (`:0` the index); `treeish` `_` is the working copy, as Node-RED has it. */
  async file(file: string, treeish: string): Promise<string> {
    const rel = checkProjectFile(this.dir, file);
    if (treeish === '_') {
      return readFile(path.join(this.dir, rel), 'utf8').catch(() => {
        throw new RunnelError('not_found', `${rel} is not in the working copy`);
      });
    }
    return (await this.run(['show', `${checkTreeish(treeish)}:${rel}`])).stdout;
  }

  async stage(files: string[]): Promise<void> {
    await this.run(['add', '--', ...files.map((f) => checkProjectFile(this.dir, f))]);
  }

  /** Unstages one file, or everything when `file` is undefined. */
  async unstage(file?: string): Promise<void> {
    const args = ['reset', '-q', '--'];
    if (file !== undefined) args.push(checkProjectFile(this.dir, file));
    if ((await this.commitCount()) === 0) {
      // Before the first commit there is no HEAD to reset to: take the files out of the index.
      await this.run(['rm', '-r', '-q', '--cached', '--', ...(file === undefined ? ['.'] : args.slice(3))]);
      return;
    }
    await this.run(args);
  }

  /** Puts a file back as it is in HEAD. */
  async revert(file: string): Promise<void> {
    await this.run(['checkout', 'HEAD', '--', checkProjectFile(this.dir, file)]);
  }

  async commit(message: unknown, user: GitUser | undefined): Promise<void> {
    if (typeof message !== 'string' || message.trim() === '') throw new RunnelError('invalid_request', 'A commit needs a message');
    try {
      await this.run([...identity(user), 'commit', '-q', '-m', message]);
    } catch (err) {
      // Git says "nothing to commit" with a failure; Node-RED treats it as done.
      if ((err as RunnelError).code === 'git_error' && /nothing (added )?to commit/i.test((err as Error).message)) return;
      throw err;
    }
  }

  /** `type` tree: the working copy against the index; index: the index against HEAD. */
  async diff(file: string, type: string): Promise<string> {
    if (type !== 'tree' && type !== 'index') throw new RunnelError('invalid_request', 'The diff type is tree or index');
    const args = ['diff', '-w'];
    if (type === 'index') args.push('--cached');
    return (await this.run([...args, '--', checkProjectFile(this.dir, file)])).stdout;
  }

  async commits(limit: number, before?: string): Promise<{ count: number; commits: Commit[]; before?: string; total: number }> {
    const total = await this.commitCount();
    if (total === 0) return { count: 0, commits: [], total: 0 };
    const args = ['log', LOG_FORMAT, '-n', String(limit)];
    if (before !== undefined) args.push(checkRef(before, 'The commit'));
    const commits = parseLog((await this.run(args)).stdout);
    return { count: commits.length, commits, ...(before === undefined ? {} : { before }), total };
  }

  /** `git show` of one commit: its header and patch, as the editor renders it. */
  async show(sha: string): Promise<string> {
    return (await this.run(['show', checkRef(sha, 'The commit'), '--'])).stdout;
  }

  async branches(remote: boolean): Promise<{ branches: Branch[] }> {
    return { branches: parseBranches((await this.run(['branch', '-vv', '--no-color', ...(remote ? ['-r'] : [])])).stdout) };
  }

  async checkout(branch: unknown, create: boolean): Promise<void> {
    const name = checkRef(branch, 'The branch');
    await this.run(create ? ['checkout', '-q', '-b', name] : ['checkout', '-q', name, '--']);
  }

  async deleteBranch(branch: string, force: boolean): Promise<void> {
    await this.run(['branch', force ? '-D' : '-d', '--', checkRef(branch, 'The branch')]);
  }

  async remotes(): Promise<Record<string, { fetch?: string; push?: string }> | undefined> {
    return parseRemotes((await this.run(['remote', '-v'])).stdout);
  }

  async abortMerge(): Promise<void> {
    await this.run(['merge', '--abort']);
  }
}

/** `-c user.name=… -c user.email=…` when the editor user set both, else git's own configuration. */
export function identity(user: GitUser | undefined): string[] {
  const { name, email } = user ?? {};
  if (typeof name !== 'string' || typeof email !== 'string' || name === '' || email === '') return [];
  if (/[\0-\x1f\x7f]/.test(name + email)) throw new RunnelError('git_invalid_argument', 'The git user name and e-mail have no control characters');
  return ['-c', `user.name=${name}`, '-c', `user.email=${email}`];
}
