import path from 'node:path';
import { RunnelError } from '../base/errors.js';

/**
 * What a client may name: projects (a folder under projects/), files inside a project, and git
 * refs. Each is checked before it reaches the file system or git's argument list.
 */

/** The editor's own rule for a project name, with a length bound a file system always allows. */
const PROJECT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function checkProjectName(name: unknown): string {
  if (typeof name !== 'string' || !PROJECT_NAME.test(name)) {
    throw new RunnelError('invalid_project_name', 'A project name is 1 to 64 letters, digits, "-" or "_" (no dots, slashes or spaces)');
  }
  return name;
}

/** A path relative to the project's folder that stays inside it (and out of .git). */
export function checkProjectFile(root: string, file: unknown): string {
  if (typeof file !== 'string' || file === '' || file.includes('\0')) throw new RunnelError('invalid_request', 'A file path is required');
  const full = path.resolve(root, file);
  const rel = path.relative(root, full);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep)[0] === '.git') {
    throw new RunnelError('invalid_request', `${file} is not a file of the project`);
  }
  return rel.split(path.sep).join('/');
}

/** Git's ref name rules (check-ref-format), narrowed as Node-RED does: no leading dash, no `..`, no `@{`. */
const REF = /^[A-Za-z0-9_@][A-Za-z0-9_./+@-]*$/;

export function checkRef(value: unknown, what: string): string {
  if (typeof value !== 'string' || !REF.test(value) || value.includes('..') || value.includes('@{') || value.endsWith('.lock') || value.endsWith('/') || value.length > 255) {
    throw new RunnelError('git_invalid_argument', `${what} is not a valid git name`);
  }
  return value;
}

/**
 * A revision the editor reads a file at: a ref as above, optionally followed by `~n` or `^n`
 * (`sha~1`), or a merge stage `:0` to `:3` (index, common ancestor, ours, theirs).
 */
export function checkTreeish(value: unknown): string {
  if (typeof value === 'string' && /^:[0-3]$/.test(value)) return value;
  const m = typeof value === 'string' ? /^(.*?)((?:[~^]\d{0,4})*)$/.exec(value) : null;
  if (!m) throw new RunnelError('git_invalid_argument', 'The revision is not a valid git name');
  return checkRef(m[1], 'The revision') + m[2];
}

/** Remote URLs git may use here: file://, http(s)://, ssh:// and scp-like user@host:path. */
const REMOTE_URL = /^(file:\/\/|https?:\/\/|ssh:\/\/|git:\/\/)\S+$|^[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:\S+$/i;

export function checkRemoteUrl(value: unknown): string {
  if (typeof value !== 'string' || !REMOTE_URL.test(value)) {
    throw new RunnelError('git_invalid_argument', 'A remote URL starts with file://, http(s)://, ssh:// or is user@host:path');
  }
  // Node-RED's rule: a password in the URL would be stored in .git/config in clear.
  if (/^https?:\/\/[^/]*@/i.test(value)) throw new RunnelError('git_invalid_argument', 'Give the user name and password apart from the URL, not inside it');
  return value;
}
