import { execFile } from 'node:child_process';
import path from 'node:path';
import { RunnelError, type ErrorCode } from '../base/errors.js';

/**
 * Runs Debian's git on a working copy. Arguments go to execFile as a list (never through a shell),
 * and every caller puts `--` before paths and refs it did not make itself, so a file named `-x`
 * cannot become an option. Git never prompts (no terminal, no credential helper): a remote that
 * wants a password it was not given fails at once with `git_auth_failed`.
 */

export interface GitResult {
  stdout: string;
  stderr: string;
}

/** Output beyond this is an abuse (a huge diff or log), not something the editor can show. */
const MAX_OUTPUT = 64 * 1024 * 1024;
const TIMEOUT_MS = 120_000;

/** `input`: what git reads on its standard input (`update-ref --stdin`); `signal` stops git (a clone past its size bound). */
export function git(
  cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { input?: string; signal?: AbortSignal } = {},
): Promise<GitResult> {
  const { input, signal } = options;
  return new Promise((resolve, reject) => {
    const child = execFile('git', ['-c', 'credential.helper=', '-c', 'core.quotePath=false', ...args], {
      cwd,
      // The ceiling stops git at the working copy: with its .git damaged, git would otherwise run on
      // the first repository above it (a user dir kept in git) and commit the user dir's files there.
      // No optional locks: a status the editor polls would otherwise take the index's lock and make
      // a commit running at that moment fail.
      env: {
        ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', SSH_ASKPASS: '', LC_ALL: 'C',
        GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(cwd)), GIT_OPTIONAL_LOCKS: '0', ...env,
      },
      maxBuffer: MAX_OUTPUT,
      timeout: TIMEOUT_MS,
      ...(signal === undefined ? {} : { signal }),
      windowsHide: true,
    }, (err, stdout, stderr) => {
      if (!err) return resolve({ stdout, stderr });
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return reject(new RunnelError('git_not_found', 'Projects need git, and this server has none on PATH'));
      // A stopped git is answered for at once, while it is still cleaning up and writing through
      // absolute paths: the caller may remove its folder only once it has ended, or git makes it again.
      const failed = () => reject(gitError(stdout, stderr));
      if (child.exitCode === null && child.signalCode === null) child.once('exit', failed);
      else failed();
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Git's failures as Node-RED's codes, which the editor branches on; the message is git's own words. */
const CLASSIFY: Array<[RegExp, ErrorCode, 'out' | 'err']> = [
  [/Connection refused|Connection timed out|Could not resolve host|Failed to connect/i, 'git_connection_failed', 'err'],
  [/Host key verification failed/i, 'git_host_key_verification_failed', 'err'],
  [/could not read (Username|Password)|HTTP Basic: Access denied|Permission denied \(publickey|Authentication failed|returned error: 40[13]/i, 'git_auth_failed', 'err'],
  [/commit your changes or stash|would be overwritten/i, 'git_local_overwrite', 'err'],
  [/CONFLICT/, 'git_pull_merge_conflict', 'out'],
  [/not fully merged/i, 'git_delete_branch_unmerged', 'err'],
  [/remote .* already exists/i, 'git_remote_already_exists', 'err'],
  [/does not appear to be a git repository|not a git repository/i, 'git_not_a_repository', 'err'],
  [/Repository not found|repository '.*' does not exist|returned error: 404/i, 'git_repository_not_found', 'err'],
  [/refusing to merge unrelated histories/i, 'git_pull_unrelated_history', 'err'],
  [/Please tell me who you are|empty ident name|name consists only of disallowed characters/i, 'git_missing_user', 'err'],
  // `push --porcelain` reports a rejected ref on stdout, a line starting with "!".
  [/^!.*(\[rejected\]|non-fast-forward|fetch first)/m, 'git_push_failed', 'out'],
];

function gitError(stdout: string, stderr: string): RunnelError {
  const message = redact(stderr.trim() || stdout.trim() || 'git failed');
  for (const [pattern, code, stream] of CLASSIFY) {
    if (pattern.test(stream === 'out' ? stdout : stderr)) return new RunnelError(code, message);
  }
  return new RunnelError('git_error', message);
}

/** A URL's user and password never reach a message or the log. */
function redact(text: string): string {
  return text.replace(/(\w+:\/\/)[^/\s@]+@/g, '$1***@');
}
