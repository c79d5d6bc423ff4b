import { backupPathFor, readTextIfExists, writeFileAtomic } from '../storage/atomic-file.js';

/** What .config.projects.json keeps of one project (Node-RED keeps the same, and more we carry along). */
export interface ProjectEntry {
  credentialSecret?: string | false;
  [key: string]: unknown;
}

interface ConfigFile {
  activeProject?: string;
  projects: Record<string, ProjectEntry>;
}

/**
 * Node-RED's .config.projects.json: the active project and each project's settings, among them
 * its credential secret (so the file is written for the owner only). Unknown keys are kept.
 */
export class ProjectsConfig {
  private data: ConfigFile = { projects: {} };

  constructor(private readonly file: string) {}

  async load(): Promise<void> {
    for (const candidate of [this.file, backupPathFor(this.file)]) {
      const text = await readTextIfExists(candidate);
      if (text === undefined) continue;
      try {
        const value = JSON.parse(text) as Partial<ConfigFile>;
        const projects = typeof value.projects === 'object' && value.projects !== null ? value.projects : {};
        this.data = { ...value, projects: Object.assign(Object.create(null) as Record<string, ProjectEntry>, projects) };
        return;
      } catch {
        // The backup is tried next.
      }
    }
  }

  get active(): string | undefined {
    return typeof this.data.activeProject === 'string' ? this.data.activeProject : undefined;
  }

  project(name: string): ProjectEntry {
    return this.data.projects[name] ?? {};
  }

  setActive(name: string): Promise<void> {
    return this.save({ ...this.data, activeProject: name });
  }

  setProject(name: string, entry: ProjectEntry): Promise<void> {
    return this.save({ ...this.data, projects: { ...this.data.projects, [name]: { ...this.project(name), ...entry } } });
  }

  removeProject(name: string): Promise<void> {
    const { [name]: _removed, ...projects } = this.data.projects;
    return this.save({ ...this.data, projects });
  }

  private async save(next: ConfigFile): Promise<void> {
    await writeFileAtomic(this.file, JSON.stringify(next, null, 4), { backup: true, mode: 0o600 });
    this.data = next;
  }
}
