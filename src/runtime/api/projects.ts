import path from 'node:path';
import type { Runtime } from '../runtime.js';
import { RunnelError } from '../../base/errors.js';
import type { Projects, ProjectChange, ProjectInfo, NewProject } from '../../projects/projects.js';
import type { GitUser, RepoStatus, Repository } from '../../projects/repository.js';
import type { Branch, Commit, FileEntry } from '../../projects/git-parse.js';
import { RemoteAuth } from '../../projects/remote-auth.js';
import { SshKeys } from '../../projects/ssh-keys.js';
import { sshKeysApi, type SshKeysApi } from './ssh-keys.js';
import { projectRemotesApi, type ProjectRemotesApi, type ProjectsContext, type RemoteSpec } from './project-remotes.js';
import type { Caller } from './caller.js';
import { clusterProjects } from './projects-cluster.js';

export type { ProjectInfo };

/**
 * Node-RED's Projects (editorTheme.projects.enabled): /projects and its sub-routes, with Node-RED's
 * request and answer shapes. Every operation but listing, creating and describing works on the
 * active project only, as Node-RED's do; changing the active project, pulling, reverting or
 * switching branches deploys the project's flows (a reload). Changes are audited.
 */
export interface ProjectsApi extends Omit<ProjectRemotesApi, 'clone' | 'fetchUpstream'> {
  list(): Promise<{ projects: string[]; active?: string }>;
  /** Creates an empty project, clones one (`git.remotes.origin`) or copies one (`copy`), and makes it the active one. */
  create(project: NewProject & { git?: { remotes?: { origin?: RemoteSpec } } }, caller: Caller): Promise<ProjectInfo>;
  get(name: string): Promise<ProjectInfo>;
  /** Opens a project: its flows are deployed, context values dropped with `clearContext`. */
  activate(name: string, clearContext: boolean, caller: Caller): Promise<{ projects: string[]; active?: string }>;
  update(name: string, change: ProjectChange, caller: Caller): Promise<ProjectInfo>;
  remove(name: string, caller: Caller): Promise<void>;
  /** With `remote`, the upstream's remote is fetched first. */
  status(name: string, remote: boolean, caller: Caller): Promise<RepoStatus>;
  files(name: string): Promise<Record<string, FileEntry>>;
  /** A file in a commit, a merge stage (`:0` the index) or the working copy (`_`). */
  file(name: string, treeish: string, file: string): Promise<string>;
  revert(name: string, file: string, caller: Caller): Promise<void>;
  stage(name: string, files: string[]): Promise<RepoStatus>;
  /** Unstages one file, or all when `file` is undefined. */
  unstage(name: string, file: string | undefined): Promise<RepoStatus>;
  commit(name: string, message: unknown, caller: Caller): Promise<RepoStatus>;
  diff(name: string, type: string, file: string): Promise<string>;
  commits(name: string, limit: number, before?: string): Promise<{ count: number; commits: Commit[]; before?: string; total: number }>;
  /** One commit as `git show` prints it. */
  show(name: string, sha: string): Promise<string>;
  branches(name: string): Promise<{ branches: Branch[] }>;
  /** Checks out a branch (creating it with `create`) and deploys its flows. */
  setBranch(name: string, branch: unknown, create: boolean, caller: Caller): Promise<{ branches: Branch[] }>;
  deleteBranch(name: string, branch: string, force: boolean, caller: Caller): Promise<void>;
  abortMerge(name: string, caller: Caller): Promise<void>;
  /** The caller's SSH keys (/settings/user/keys), for SSH remotes. */
  keys: SshKeysApi;
}

export function projectsApi(runtime: Runtime, projects: Projects): ProjectsApi {
  const { storage, log } = runtime;
  const userOf = (caller: Caller) => caller.user ?? '_';
  const gitSettings = async (caller: Caller) => {
    const git = (await storage.getUserSettings(userOf(caller))).git;
    return typeof git === 'object' && git !== null ? (git as { user?: GitUser; workflow?: { mode?: unknown } }) : {};
  };
  const active = async (name: string): Promise<Repository> => {
    const repo = await projects.repository(name);
    if (projects.active !== name) throw new RunnelError('project_not_active', `${name} is not the active project: open it first`);
    return repo;
  };
  const audit = (event: string, caller: Caller, extra: Record<string, unknown> = {}) =>
    log.audit({ event: `projects.${event}`, user: caller.user, ip: caller.ip, reqId: caller.reqId, ...extra }, event);
  const keys = new SshKeys(runtime.settings.userDir, { credentialSecret: runtime.settings.credentialSecret, storage });
  const ctx: ProjectsContext = {
    projects,
    auth: new RemoteAuth(keys, runtime.settings.userDir),
    active,
    reload: (action, clearContext, caller, opening) => reload(action, clearContext, caller, opening),
    gitUser: async (caller) => (await gitSettings(caller)).user,
    audit,
  };
  const remoteOps = projectRemotesApi(ctx);
  const cluster = storage.shared && clusterProjects(runtime, projects, storage.shared, () => runningConfig());
  const list = async () => ({ projects: await projects.list(), ...(projects.active === undefined ? {} : { active: projects.active }) });

  /** Deploys the flows of the active project (or of `opening`, which becomes the active one), then tells the editors. */
  const reload = async (action: string, clearContext: boolean, caller: Caller, opening?: string, notify = true) => {
    const paths = await projects.flowPaths(opening ?? projects.active);
    if (paths === undefined) throw new RunnelError('missing_flow_file', 'The project\'s package.json names no flow file');
    if (cluster) {
      if (opening !== undefined) await projects.setActive(opening);
      cluster.deployAfter(paths, clearContext, caller, () => notify && announce(action));
      return;
    }
    await runtime.reopen(async () => {
      if (opening !== undefined) await projects.setActive(opening);
      await storage.useFlowFiles?.(paths);
    }, clearContext, caller);
    if (notify) announce(action);
  };
  const announce = (action: string) => runtime.events.emit('runtime-event', { id: 'project-update', payload: { project: projects.active, action } });

  const switchTo = async (name: string, clearContext: boolean, caller: Caller, notify = true) => {
    await projects.repository(name);
    await reload('loaded', clearContext, caller, name, notify);
  };

  const copy = (name: unknown, from: unknown, caller: Caller) => projects.exclusive(async () => {
    const copied = await projects.copy(name, from);
    audit('copy', caller, { id: copied, from });
    await switchTo(copied, false, caller);
    return copied;
  });

  const createEmpty = (project: NewProject & { migrateFiles?: unknown }, caller: Caller) => projects.exclusive(async () => {
    // The editor's first project takes the flows running now (Node-RED's migrateFiles), credentials included.
    const migrated = project.migrateFiles === true && projects.active === undefined ? runningConfig() : undefined;
    const user = (await gitSettings(caller)).user;
    const name = await projects.create(project, user);
    audit('create', caller, { name });
    const migrating = migrated !== undefined && migrated.flows.length > 0;
    // The editors load the project once, with the migrated flows in it.
    await switchTo(name, false, caller, !migrating);
    if (migrating) {
      await runtime.deploy({ ...migrated, type: 'full', ...caller });
      const paths = await projects.flowPaths();
      const repo = await projects.repository(name);
      await cluster?.writeFiles();
      if (paths !== undefined) await repo.stage([paths.flows, paths.creds].map((f) => path.relative(repo.dir, f)));
      await repo.commit('Migrate the flows into the project', user);
      announce('loaded');
    }
    return projects.describe(name);
  });
  const runningConfig = () => {
    const flows = structuredClone(runtime.getFlows().flows);
    const credentials = Object.fromEntries(flows.flatMap((n) => {
      const c = runtime.credentials.get(n.id);
      return c === undefined ? [] : [[n.id, c]];
    }));
    return { flows, credentials };
  };

  const workflowAuto = async (caller: Caller) => {
    const own = (await gitSettings(caller)).workflow?.mode;
    const theme = runtime.settings.editorTheme.projects as { workflow?: { mode?: unknown } } | undefined;
    return (own ?? theme?.workflow?.mode) === 'auto';
  };

  // workflow.mode "auto": every deploy is committed, as Node-RED does in saveFlows.
  runtime.observeDeploys(({ type, outcome, user }) => {
    if (outcome !== 'success' || type === 'reload' || projects.active === undefined) return;
    const caller = { user };
    const commit = async () => {
      const paths = await projects.flowPaths();
      const repo = await projects.repository(projects.active);
      if (paths === undefined || (await repo.isMerging())) return;
      const files = [paths.flows, paths.creds].map((f) => path.relative(repo.dir, f));
      await repo.stage(files);
      const status = await repo.status();
      if (!files.some((f) => /^[MA]/.test(status.files[f]?.status ?? ''))) return;
      await repo.commit('Update flow files', (await gitSettings(caller)).user);
    };
    void workflowAuto(caller).then((auto) => (auto ? (cluster ? cluster.run(commit) : projects.exclusive(commit)) : undefined)).catch((err: unknown) => log.error({ err, project: projects.active }, 'Committing the deployed flows failed'));
  });

  const { clone, fetchUpstream, ...remoteRoutes } = remoteOps;
  const api: ProjectsApi = {
    ...remoteRoutes,
    keys: sshKeysApi(keys, audit),
    list,
    create: async (project, caller) => {
      const origin = project.git?.remotes?.origin;
      if (origin !== undefined) return projects.describe(await clone({ ...project, git: { remotes: { origin } } }, caller));
      if (project.copy !== undefined) return projects.describe(await copy(project.name, project.copy, caller));
      return createEmpty(project, caller);
    },
    get: (name) => projects.describe(name),
    activate: (name, clearContext, caller) => projects.exclusive(async () => {
      if (projects.active !== name) {
        audit('set', caller, { id: name });
        await switchTo(name, clearContext, caller);
      }
      return list();
    }),
    update: (name, change, caller) => projects.exclusive(async () => {
      const repo = await active(name);
      const result = await projects.update(name, change);
      audit('update', caller, { id: name });
      if (result.changedFiles.length > 0 && (await workflowAuto(caller))) {
        await repo.stage(result.changedFiles);
        await repo.commit(`Update ${result.changedFiles.join(', ')}`, (await gitSettings(caller)).user);
      }
      if (result.flowFilesChanged || result.secretChanged) await reload('updated', false, caller);
      return projects.describe(name);
    }),
    remove: (name, caller) => projects.exclusive(async () => {
      await projects.remove(name);
      audit('delete', caller, { id: name });
    }),
    status: async (name, remote, caller) => {
      const repo = await active(name);
      // Fetch first, so the status (three git runs) is read once, with the remote's commits in it.
      const remoteError = remote ? await fetchUpstream(name, caller) : undefined;
      const status = await repo.status();
      return remoteError === undefined ? status : { ...status, branches: { ...status.branches, remoteError } };
    },
    files: async (name) => (await (await active(name)).status()).files,
    file: async (name, treeish, file) => (await active(name)).file(file, treeish),
    revert: (name, file, caller) => projects.exclusive(async () => {
      await (await active(name)).revert(file);
      audit('revert', caller, { id: name, file });
      await reload('revert', false, caller);
    }),
    stage: (name, files) => projects.exclusive(async () => {
      const repo = await active(name);
      await repo.stage(files);
      return repo.status();
    }),
    unstage: (name, file) => projects.exclusive(async () => {
      const repo = await active(name);
      await repo.unstage(file);
      return repo.status();
    }),
    commit: (name, message, caller) => projects.exclusive(async () => {
      const repo = await active(name);
      const merging = await repo.isMerging();
      await repo.commit(message, (await gitSettings(caller)).user);
      audit('commit', caller, { id: name });
      if (merging) await reload('merge-complete', false, caller);
      return repo.status();
    }),
    diff: async (name, type, file) => (await active(name)).diff(file, type),
    commits: async (name, limit, before) => (await active(name)).commits(limit, before),
    show: async (name, sha) => (await active(name)).show(sha),
    branches: async (name) => (await active(name)).branches(false),
    setBranch: (name, branch, create, caller) => projects.exclusive(async () => {
      const repo = await active(name);
      await repo.checkout(branch, create);
      audit('branch', caller, { id: name, branch });
      await reload('change-branch', false, caller);
      return repo.branches(false);
    }),
    deleteBranch: (name, branch, force, caller) => projects.exclusive(async () => {
      await (await active(name)).deleteBranch(branch, force);
      audit('branch.delete', caller, { id: name, branch });
    }),
    abortMerge: (name, caller) => projects.exclusive(async () => {
      await (await active(name)).abortMerge();
      audit('merge.abort', caller, { id: name });
      await reload('merge-abort', false, caller);
    }),
  };
  return cluster ? onCluster(api, cluster.run) : api;
}

/** Every operation but the SSH keys' (the user's, in the shared settings) runs through the cluster. */
function onCluster(api: ProjectsApi, run: <T>(task: () => Promise<T>) => Promise<T>): ProjectsApi {
  const wrapped = Object.fromEntries(Object.entries(api).map(([key, op]) =>
    [key, typeof op === 'function' ? (...args: unknown[]) => run(() => (op as (...a: unknown[]) => Promise<unknown>)(...args)) : op]));
  return wrapped as unknown as ProjectsApi;
}
