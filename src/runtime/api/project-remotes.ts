import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../../base/errors.js';
import type { Projects } from '../../projects/projects.js';
import type { GitUser, Repository } from '../../projects/repository.js';
import type { Branch } from '../../projects/git-parse.js';
import type { RemoteAuth } from '../../projects/remote-auth.js';
import { checkProjectFile, checkProjectName } from '../../projects/names.js';
import { resolvedText } from '../../projects/resolve.js';
import * as remotes from '../../projects/remotes.js';
import type { Caller } from './caller.js';

/** What the projects API shares with its remote operations. */
export interface ProjectsContext {
  projects: Projects;
  auth: RemoteAuth;
  /** The project's working copy when it is the active one; `project_not_active` otherwise. */
  active(name: string): Promise<Repository>;
  /** Deploys the active project's flows (or `opening`'s, which becomes active) and tells the editors. */
  reload(action: string, clearContext: boolean, caller: Caller, opening?: string): Promise<void>;
  gitUser(caller: Caller): Promise<GitUser | undefined>;
  audit(event: string, caller: Caller, extra?: Record<string, unknown>): void;
}

/** A remote as the editor gives it: its URL, and a user name with a password or token for HTTPS, or one of the user's SSH keys. */
export interface RemoteSpec {
  name?: unknown;
  url?: unknown;
  username?: unknown;
  password?: unknown;
  keyFile?: unknown;
  passphrase?: unknown;
}

/** Remotes, push, pull, fetch, clone and conflict resolution: Node-RED's routes on the active project. */
export interface ProjectRemotesApi {
  remotes(name: string): Promise<{ remotes: Array<{ name: string; fetch?: string; push?: string }> }>;
  addRemote(name: string, remote: RemoteSpec, caller: Caller): Promise<{ remotes: Array<{ name: string; fetch?: string; push?: string }> }>;
  removeRemote(name: string, remote: string, caller: Caller): Promise<{ remotes: Array<{ name: string; fetch?: string; push?: string }> }>;
  /** PUT /remotes/:name `{auth: {username, password}}` or `{auth: {keyFile, passphrase}}`: the credentials to use for it (kept in memory). */
  updateRemote(name: string, remote: string, auth: unknown, caller: Caller): Promise<void>;
  /** Fetches the upstream's remote before a status; a failure is what Node-RED reports in `branches.remoteError`. */
  fetchUpstream(name: string, caller: Caller): Promise<{ remote: string; code: string } | undefined>;
  /** Fetches every remote, then lists the remote branches. */
  remoteBranches(name: string, caller: Caller): Promise<{ branches: Branch[] }>;
  branchStatus(name: string, remoteBranch: string): Promise<{ commits: { ahead: number; behind: number } }>;
  /** Pushes to `remote/branch` (`origin/main`), or to the upstream when undefined. */
  push(name: string, remoteBranch: string | undefined, track: boolean, caller: Caller): Promise<void>;
  /** Pulls and deploys the merged flows; a conflict answers `git_pull_merge_conflict` and leaves the merge to resolve. */
  pull(name: string, remoteBranch: string | undefined, setUpstream: boolean, allowUnrelatedHistories: boolean, caller: Caller): Promise<void>;
  /** Writes a conflicted file as resolved and stages it. */
  resolve(name: string, file: string, resolutions: unknown): Promise<void>;
  /** POST /projects with `git.remotes.origin`: clones the repository as a new project and opens it. */
  clone(project: { name?: unknown; credentialSecret?: unknown; git: { remotes: { origin: RemoteSpec & { branch?: unknown } } } }, caller: Caller): Promise<string>;
}

export function projectRemotesApi(ctx: ProjectsContext): ProjectRemotesApi {
  const { projects, auth } = ctx;
  const list = async (repo: Repository) => ({
    remotes: Object.entries((await repo.remotes()) ?? {}).map(([name, urls]) => ({ name, ...urls })),
  });
  /** Runs a git operation on `remote` with the credentials the caller gave for it. */
  const withRemote = async <T>(name: string, repo: Repository, remote: string, caller: Caller, task: (env: NodeJS.ProcessEnv) => Promise<T>) =>
    auth.with(name, (await repo.remotes())?.[remote]?.fetch, caller.user, task);
  const target = async (repo: Repository, remoteBranch: string | undefined) => {
    const ref = remoteBranch || (await remotes.upstream(repo.dir));
    if (!ref) throw new RunnelError('invalid_request', 'The branch has no upstream: name the remote branch');
    return remotes.splitRemoteBranch(ref, Object.keys((await repo.remotes()) ?? {}));
  };

  return {
    remotes: async (name) => list(await ctx.active(name)),
    addRemote: (name, remote, caller) => projects.exclusive(async () => {
      const repo = await ctx.active(name);
      await remotes.addRemote(repo.dir, remote.name, remote.url);
      auth.set(name, remote.url as string, caller.user, remote);
      ctx.audit('remote.add', caller, { id: name, remote: remote.name });
      return list(repo);
    }),
    removeRemote: (name, remote, caller) => projects.exclusive(async () => {
      const repo = await ctx.active(name);
      await remotes.removeRemote(repo.dir, remote);
      ctx.audit('remote.remove', caller, { id: name, remote });
      return list(repo);
    }),
    updateRemote: async (name, remote, given, caller) => {
      const repo = await ctx.active(name);
      const url = (await repo.remotes())?.[remote]?.fetch;
      if (url === undefined) throw new RunnelError('not_found', `The project has no remote ${remote}`);
      if (typeof given !== 'object' || given === null) return;
      auth.set(name, url, caller.user, given as RemoteSpec);
      // Who changed a remote's credentials, never what they are.
      ctx.audit('remote.auth', caller, { id: name, remote });
    },
    fetchUpstream: async (name, caller) => {
      const repo = await ctx.active(name);
      const ref = await remotes.upstream(repo.dir);
      if (ref === undefined) return undefined;
      const { remote } = remotes.splitRemoteBranch(ref, Object.keys((await repo.remotes()) ?? {}));
      try {
        await withRemote(name, repo, remote, caller, (env) => remotes.fetchRemote(repo.dir, remote, env));
        return undefined;
      } catch (err) {
        return { remote, code: (err as RunnelError).code ?? 'git_error' };
      }
    },
    remoteBranches: async (name, caller) => {
      const repo = await ctx.active(name);
      for (const remote of Object.keys((await repo.remotes()) ?? {})) {
        await withRemote(name, repo, remote, caller, (env) => remotes.fetchRemote(repo.dir, remote, env));
      }
      return repo.branches(true);
    },
    branchStatus: async (name, remoteBranch) => remotes.branchStatus((await ctx.active(name)).dir, remoteBranch),
    push: (name, remoteBranch, track, caller) => projects.exclusive(async () => {
      const repo = await ctx.active(name);
      const { remote, branch } = await target(repo, remoteBranch);
      await withRemote(name, repo, remote, caller, (env) => remotes.push(repo.dir, remote, remoteBranch ? branch : undefined, track, env));
      ctx.audit('push', caller, { id: name, remote, branch });
    }),
    pull: (name, remoteBranch, setUpstream, allowUnrelatedHistories, caller) => projects.exclusive(async () => {
      const repo = await ctx.active(name);
      if (setUpstream && remoteBranch) await remotes.setUpstream(repo.dir, remoteBranch);
      const { remote, branch } = await target(repo, remoteBranch);
      const named = remoteBranch && !setUpstream ? { remote, branch } : {};
      const user = await ctx.gitUser(caller);
      await withRemote(name, repo, remote, caller, (env) => remotes.pull(repo.dir, { ...named, allowUnrelatedHistories, user }, env));
      ctx.audit('pull', caller, { id: name, remote, branch });
      await ctx.reload('pull', false, caller);
    }),
    resolve: (name, file, resolutions) => projects.exclusive(async () => {
      const repo = await ctx.active(name);
      const rel = checkProjectFile(repo.dir, file);
      const full = path.join(repo.dir, rel);
      const current = await readFile(full, 'utf8').catch(() => '');
      await writeFile(full, resolvedText(current, resolutions));
      await repo.stage([rel]);
    }),
    clone: (project, caller) => projects.exclusive(async () => {
      const name = checkProjectName(project.name);
      const origin = project.git.remotes.origin;
      const dir = path.join(projects.dir, name);
      if (await projects.repository(name).then(() => true, () => false)) throw new RunnelError('project_exists', `A project named ${name} already exists`);
      auth.set(name, String(origin.url), caller.user, origin);
      await mkdir(dir);
      try {
        const branch = typeof origin.branch === 'string' ? origin.branch : undefined;
        await auth.with(name, String(origin.url), caller.user, (env) => remotes.clone(dir, origin.url, 'origin', branch, env, projects.maxCloneSize));
      } catch (err) {
        // Retried: a stopped clone's index-pack may still write for a moment after git itself ended.
        await rm(dir, { recursive: true, force: true, maxRetries: 10 });
        auth.forgetProject(name);
        throw err;
      }
      await projects.setSecret(name, project.credentialSecret);
      ctx.audit('clone', caller, { id: name });
      await ctx.reload('loaded', false, caller, name);
      return name;
    }),
  };
}
