import type { SshKeys } from './ssh-keys.js';
import { knownHostsFiles, sshSession, type GitSession } from './ssh-session.js';

/**
 * The credentials the editor gave for remotes, per project, remote URL and editor user, as
 * Node-RED's authCache keeps them: in memory only, so they are never at rest on disk, and lost at a
 * restart (the editor asks again on `git_auth_failed`). For HTTPS a user name and password (or
 * token); for SSH the name of one of the user's keys (/settings/user/keys) and its passphrase.
 */

type Auth = { username: string; password: string } | { keyFile: string; passphrase: string };

export class RemoteAuth {
  private readonly entries = new Map<string, Auth>();

  constructor(private readonly keys: SshKeys, private readonly userDir: string) {}

  set(project: string, url: string, user: string | undefined, auth: { username?: unknown; password?: unknown; keyFile?: unknown; passphrase?: unknown }): void {
    if (typeof auth.username === 'string' && typeof auth.password === 'string') {
      this.entries.set(key(project, url, user), { username: auth.username, password: auth.password });
    } else if (typeof auth.keyFile === 'string' && auth.keyFile !== '') {
      this.entries.set(key(project, url, user), { keyFile: auth.keyFile, passphrase: typeof auth.passphrase === 'string' ? auth.passphrase : '' });
    }
  }

  /**
   * Runs `task` with what git needs to reach `url` as `user`. HTTPS credentials go in git's
   * environment-only configuration as a Basic header, so they appear neither in its arguments
   * (visible to `ps`) nor in .git/config; an SSH key is decrypted for the run only (ssh-session.ts).
   */
  async with<T>(project: string, url: string | undefined, user: string | undefined, task: (env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
    const auth = url === undefined ? undefined : this.entries.get(key(project, url, user));
    if (auth === undefined) return task({});
    if ('username' in auth) {
      const basic = Buffer.from(`${auth.username}:${auth.password}`).toString('base64');
      return task({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` });
    }
    const session: GitSession = await sshSession(await this.keys.privateKey(user, auth.keyFile), auth.passphrase, knownHostsFiles(this.userDir));
    try {
      return await task(session.env);
    } finally {
      await session.close();
    }
  }

  forgetProject(project: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${project}\n`)) this.entries.delete(k);
  }
}

function key(project: string, url: string, user: string | undefined): string {
  return `${project}\n${url}\n${user ?? ''}`;
}
