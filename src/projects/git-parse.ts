/**
 * Git's porcelain output read into the shapes Node-RED's editor reads (GET /projects/:id/status,
 * /commits, /branches, /remotes).
 */

export interface FileEntry {
  type: 'f' | 'd';
  status?: string;
  oldName?: string;
}

export interface StatusBranches {
  local?: string;
  remote?: string;
  remoteError?: { code: string; remote?: string };
}

export interface StatusCommits {
  total: number;
  ahead?: number;
  behind?: number;
}

/** `git ls-files --cached --others --exclude-standard`: every file, with its parent folders as `dir/`. */
export function parseFileList(output: string): Record<string, FileEntry> {
  const files: Record<string, FileEntry> = Object.create(null) as Record<string, FileEntry>;
  for (const name of output.split('\n')) {
    if (name === '') continue;
    const parts = name.split('/');
    for (let i = 1; i < parts.length; i++) files[`${parts.slice(0, i).join('/')}/`] ??= { type: 'd' };
    files[name] = { type: name.endsWith('/') ? 'd' : 'f' };
  }
  return files;
}

const BRANCH_LINE = /^## (?:No commits yet on |Initial commit on )?(.+?)(?:$|\.\.\.(.+?)(?:$| \[(?:(?:ahead (\d+)(?:,\s*)?)?(?:behind (\d+))?|(gone))\]))/;

/** `git status --porcelain -b` merged into the file list; the branch line fills branches and commits. */
export function applyStatus(output: string, files: Record<string, FileEntry>, branches: StatusBranches, commits: StatusCommits): void {
  const untrackedDirs: string[] = [];
  for (const line of output.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('##')) {
      const m = BRANCH_LINE.exec(line);
      if (!m) continue;
      branches.local = m[1];
      if (m[2]) {
        branches.remote = m[2];
        commits.ahead = m[3] === undefined ? 0 : Number(m[3]);
        commits.behind = m[4] === undefined ? 0 : Number(m[4]);
      }
      if (m[5]) {
        commits.ahead = commits.total;
        branches.remoteError = { code: 'git_remote_gone' };
      }
      continue;
    }
    const status = line.slice(0, 2);
    const [from, to] = line.slice(3).split(' -> ');
    const name = to ?? from;
    const entry = (files[name] ??= { type: 'f' });
    entry.status = status;
    if (to !== undefined) entry.oldName = from;
    if (status === '??' && name.endsWith('/')) untrackedDirs.push(name);
  }
  for (const [name, entry] of Object.entries(files)) {
    if (entry.status === undefined && untrackedDirs.some((d) => name.startsWith(d))) entry.status = '??';
  }
}

export interface Commit {
  sha: string;
  parents: string[];
  refs: string[];
  author: string;
  date: string;
  subject: string;
}

/** The `--format` parseLog reads: one field a line, a line of dashes after each commit. */
export const LOG_FORMAT = '--format=sha: %H%nparents: %p%nrefs: %D%nauthor: %an%ndate: %ct%nsubject: %s%n-----';

export function parseLog(output: string): Commit[] {
  const commits: Commit[] = [];
  let current: Partial<Commit> = {};
  for (const line of output.split('\n')) {
    if (line === '-----') {
      commits.push({ sha: '', parents: [], refs: [], author: '', date: '', subject: '', ...current });
      current = {};
      continue;
    }
    const m = /^(\w+): ?(.*)$/.exec(line);
    if (!m) continue;
    const [, key, value] = m;
    if (key === 'refs') current.refs = value === '' ? [] : value.split(',').map((v) => v.trim());
    else if (key === 'parents') current.parents = value === '' ? [] : value.split(' ');
    else if (key === 'sha' || key === 'author' || key === 'date' || key === 'subject') current[key] = value;
  }
  return commits;
}

export interface Branch {
  name: string;
  remote?: string;
  status: { ahead: number; behind: number };
  commit: { sha: string; subject: string };
  current?: boolean;
}

const BRANCH = /^([ *] )(\S+) +(\S+)(?: \[(\S+?)(?:: (?:ahead (\d+)(?:, )?)?(?:behind (\d+))?)?\])? (.*)$/;

/** `git branch -vv --no-color [-r]`. */
export function parseBranches(output: string): Branch[] {
  const branches: Branch[] = [];
  for (const line of output.split('\n')) {
    const m = BRANCH.exec(line);
    if (!m || m[3] === '->') continue;
    branches.push({
      name: m[2],
      ...(m[4] === undefined ? {} : { remote: m[4] }),
      status: { ahead: Number(m[5] ?? 0), behind: Number(m[6] ?? 0) },
      commit: { sha: m[3], subject: m[7] },
      ...(m[1] === '* ' ? { current: true } : {}),
    });
  }
  return branches;
}

/** `git remote -v`: `{name: {fetch, push}}`, undefined when there is none (as Node-RED answers). */
export function parseRemotes(output: string): Record<string, { fetch?: string; push?: string }> | undefined {
  let remotes: Record<string, { fetch?: string; push?: string }> | undefined;
  for (const m of output.matchAll(/^(.+)\t(.+) \((fetch|push)\)$/gm)) {
    remotes ??= {};
    (remotes[m[1]] ??= {})[m[3] as 'fetch' | 'push'] = m[2];
  }
  return remotes;
}
