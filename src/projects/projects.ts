import { cp, lstat, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RunnelError } from '../base/errors.js';
import { SerialQueue } from '../base/serial-queue.js';
import { credentialsPathFor } from '../storage/file/flow-pair.js';
import { ProjectsConfig, type ProjectEntry } from './projects-config.js';
import { Repository, type GitUser, type RepoStatus } from './repository.js';
import { checkProjectFile, checkProjectName } from './names.js';
import { GITIGNORE, defaultPackage, defaultReadme, packageText, readPackage, readReadme, type ProjectPackage } from './project-files.js';

/** A project as GET /projects/:id describes it (Node-RED's Project.export()). */
export interface ProjectInfo {
  name: string;
  summary?: string;
  version?: string;
  description: string;
  dependencies: Record<string, string>;
  empty?: boolean;
  settings: { credentialsEncrypted: boolean; credentialSecretInvalid?: boolean };
  files: { package?: string; flow?: string; credentials?: string };
  git: { remotes?: Record<string, { fetch?: string; push?: string }>; branches: { local?: string; remote?: string } };
}

/** POST /projects: an empty project (name, summary, files.flow, credentialSecret). */
export interface NewProject {
  name?: unknown;
  summary?: unknown;
  files?: { flow?: unknown; credentials?: unknown };
  /** A string encrypts the project's credentials with it; false or "" stores them in clear. */
  credentialSecret?: unknown;
  /** The name of a project to copy instead (Runnel's: Node-RED's editor has the choice hidden, its runtime none). */
  copy?: unknown;
}

/** PUT /projects/:id settings. */
export interface ProjectChange {
  summary?: unknown;
  description?: unknown;
  version?: unknown;
  dependencies?: unknown;
  files?: { flow?: unknown; credentials?: unknown };
  credentialSecret?: unknown;
  currentCredentialSecret?: unknown;
  resetCredentialSecret?: unknown;
}

/** Where the runtime's flows and credentials live while a project is active. */
export interface FlowPaths {
  flows: string;
  creds: string;
  /** Refuses a save while a merge is in progress: it would overwrite the conflicted files (Node-RED's git_merge_conflict). */
  beforeSave: () => Promise<void>;
}

/** A project is flows and a few files: a repository past 1 GiB is not one, and would fill the disk. */
const DEFAULT_MAX_CLONE_SIZE = 1024 ** 3;

/**
 * The projects under the user dir's projects/ folder (or editorTheme.projects.path) with the
 * active one and each project's credential secret in .config.projects.json: Node-RED's layout,
 * so a Node-RED user dir with projects opens unchanged. Changes are made one at a time.
 */
export class Projects {
  readonly dir: string;
  private readonly config: ProjectsConfig;
  private readonly queue = new SerialQueue();

  /** @param maxCloneSize bytes a clone may take on disk before it is stopped (editorTheme.projects.maxCloneSize). */
  constructor(userDir: string, projectsPath: string | undefined, readonly maxCloneSize = DEFAULT_MAX_CLONE_SIZE) {
    this.dir = path.resolve(projectsPath ?? path.join(userDir, 'projects'));
    this.config = new ProjectsConfig(path.join(userDir, '.config.projects.json'));
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await this.config.load();
  }

  /** Runs a change after the ones before it, so two requests never interleave their git steps. */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(task);
  }

  get active(): string | undefined {
    return this.config.active;
  }

  async list(): Promise<string[]> {
    const names = await readdir(this.dir, { withFileTypes: true });
    return names.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  }

  /** The working copy of an existing project; `project_not_found` otherwise. */
  async repository(name: unknown): Promise<Repository> {
    const dir = path.join(this.dir, checkProjectName(name));
    const found = await lstat(dir).then((s) => s.isDirectory(), () => false);
    if (!found) throw new RunnelError('project_not_found', `There is no project ${String(name)}`);
    return new Repository(dir);
  }

  async create(req: NewProject, user: GitUser | undefined): Promise<string> {
    const name = checkProjectName(req.name);
    const summary = typeof req.summary === 'string' ? req.summary : undefined;
    const dir = path.join(this.dir, name);
    if (await lstat(dir).then(() => true, () => false)) throw new RunnelError('project_exists', `A project named ${name} already exists`);
    const flow = req.files?.flow === undefined || req.files.flow === '' ? undefined : checkProjectFile(dir, req.files.flow);
    const creds = flow === undefined ? undefined : req.files?.credentials ? checkProjectFile(dir, req.files.credentials) : path.basename(credentialsPathFor(flow));
    await mkdir(dir);
    try {
      const repo = new Repository(dir);
      await repo.init();
      const files: Array<[string, string]> = [
        ['package.json', packageText(defaultPackage(name, summary, flow, creds))],
        ['README.md', defaultReadme(name, summary)],
        ['.gitignore', GITIGNORE],
      ];
      if (flow !== undefined && creds !== undefined) files.push([flow, '[]'], [creds, '{}']);
      for (const [file, text] of files) {
        await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
        await writeFile(path.join(dir, file), text);
      }
      await repo.stage(files.map(([file]) => file));
      await repo.commit('Create project', user);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    await this.setSecret(name, req.credentialSecret);
    return name;
  }

  /**
   * POST /projects {name, copy}: a copy of another project as it is (working copy, history,
   * branches, remotes) with its credential secret, so its credentials file opens as before.
   */
  async copy(newName: unknown, from: unknown): Promise<string> {
    const name = checkProjectName(newName);
    const source = await this.repository(from);
    const dir = path.join(this.dir, name);
    if (await lstat(dir).then(() => true, () => false)) throw new RunnelError('project_exists', `A project named ${name} already exists`);
    try {
      await cp(source.dir, dir, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true });
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    await this.config.setProject(name, this.config.project(path.basename(source.dir)));
    return name;
  }

  /** A project's credential secret: a string, or false / "" / undefined for credentials in clear. */
  setSecret(name: string, secret: unknown): Promise<void> {
    return this.config.setProject(name, secretEntry(secret));
  }

  async remove(name: string): Promise<void> {
    const repo = await this.repository(name);
    if (this.active === name) throw new RunnelError('cannot_delete_active_project', 'The active project cannot be deleted: open another one first');
    await rm(repo.dir, { recursive: true, force: true });
    await this.config.removeProject(name);
  }

  async setActive(name: string): Promise<void> {
    await this.repository(name);
    await this.config.setActive(name);
  }

  /** A project's .config.projects.json entry (its credential secret), as the cluster stores it. */
  entry(name: string): ProjectEntry {
    return this.config.project(name);
  }

  setEntry(name: string, entry: ProjectEntry): Promise<void> {
    return this.config.setProject(name, entry);
  }

  /** Removes a project's working copy and entry, active or not: the cluster removed it. */
  async forget(name: string): Promise<void> {
    await rm(path.join(this.dir, checkProjectName(name)), { recursive: true, force: true });
    await this.config.removeProject(name);
  }

  /** A project's (by default the active one's) flows and credentials files; undefined when its package.json names none. */
  async flowPaths(name = this.active): Promise<FlowPaths | undefined> {
    if (name === undefined) return undefined;
    const dir = path.join(this.dir, checkProjectName(name));
    const settings = (await readPackage(dir))?.['node-red']?.settings;
    if (typeof settings?.flowFile !== 'string') return undefined;
    const flows = path.join(dir, checkProjectFile(dir, settings.flowFile));
    const creds = typeof settings.credentialsFile === 'string' ? path.join(dir, checkProjectFile(dir, settings.credentialsFile)) : credentialsPathFor(flows);
    const repo = new Repository(dir);
    const beforeSave = async () => {
      if (await repo.isMerging()) throw new RunnelError('git_merge_conflict', 'The project has unmerged changes: resolve and commit them, or abort the merge, before deploying');
    };
    return { flows, creds, beforeSave };
  }

  /** The active project's credential secret: a string, or false for credentials in clear. */
  activeSecret(): string | false {
    const secret = this.active === undefined ? undefined : this.config.project(this.active).credentialSecret;
    return typeof secret === 'string' && secret !== '' ? secret : false;
  }

  async describe(name: string, status?: RepoStatus): Promise<ProjectInfo> {
    const repo = await this.repository(name);
    const pkg: ProjectPackage = (await readPackage(repo.dir)) ?? {};
    const settings = pkg['node-red']?.settings ?? {};
    const st = status ?? (await repo.status());
    const secret = this.config.project(name).credentialSecret;
    return {
      name,
      ...(pkg.description === undefined ? {} : { summary: pkg.description }),
      ...(pkg.version === undefined ? {} : { version: pkg.version }),
      description: await readReadme(repo.dir),
      dependencies: pkg.dependencies ?? {},
      ...(st.commits.total === 0 && Object.keys(st.files).length === 0 ? { empty: true } : {}),
      settings: { credentialsEncrypted: typeof secret === 'string' && secret.length > 0 },
      files: {
        package: 'package.json',
        ...(settings.flowFile === undefined ? {} : { flow: settings.flowFile }),
        ...(settings.credentialsFile === undefined ? {} : { credentials: settings.credentialsFile }),
      },
      git: { remotes: await repo.remotes(), branches: { local: st.branches.local, remote: st.branches.remote } },
    };
  }

  /**
   * Changes a project's settings: package.json and README.md are rewritten (their names returned,
   * for an automatic commit), the credential secret kept in .config.projects.json.
   */
  async update(name: string, change: ProjectChange): Promise<{ changedFiles: string[]; flowFilesChanged: boolean; secretChanged: boolean }> {
    const repo = await this.repository(name);
    const changedFiles: string[] = [];
    let flowFilesChanged = false;
    let secretChanged = false;
    if (change.credentialSecret !== undefined) {
      const current = this.config.project(name).credentialSecret;
      const reset = change.resetCredentialSecret === true;
      if (typeof current === 'string' && current !== '' && !reset && change.currentCredentialSecret !== current) {
        throw new RunnelError('missing_current_credential_key', 'Changing the credential secret needs the current one (currentCredentialSecret), or resetCredentialSecret');
      }
      await this.config.setProject(name, secretEntry(change.credentialSecret));
      secretChanged = true;
    }
    const pkg: ProjectPackage = (await readPackage(repo.dir)) ?? defaultPackage(name, undefined);
    const before = packageText(pkg);
    if (typeof change.summary === 'string') pkg.description = change.summary;
    if (typeof change.version === 'string') pkg.version = change.version;
    if (change.dependencies !== undefined) {
      if (!isStringMap(change.dependencies)) throw new RunnelError('invalid_request', 'dependencies maps module names to versions');
      pkg.dependencies = change.dependencies;
    }
    if (change.files !== undefined) {
      const settings = ((pkg['node-red'] ??= {}).settings ??= {});
      if (change.files.flow !== undefined) {
        settings.flowFile = checkProjectFile(repo.dir, change.files.flow);
        flowFilesChanged = true;
      }
      if (change.files.credentials !== undefined) {
        settings.credentialsFile = checkProjectFile(repo.dir, change.files.credentials);
        flowFilesChanged = true;
      }
    }
    if (packageText(pkg) !== before) {
      await writeFile(path.join(repo.dir, 'package.json'), packageText(pkg));
      changedFiles.push('package.json');
    }
    if (typeof change.description === 'string') {
      await writeFile(path.join(repo.dir, 'README.md'), change.description);
      changedFiles.push('README.md');
    }
    return { changedFiles, flowFilesChanged, secretChanged };
  }
}

function secretEntry(secret: unknown): ProjectEntry {
  if (secret === undefined || secret === false || secret === '') return { credentialSecret: false };
  if (typeof secret !== 'string') throw new RunnelError('invalid_request', 'credentialSecret is a string, or false for credentials in clear');
  return { credentialSecret: secret };
}

function isStringMap(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}
