/**
 * The user names and passwords (or tokens) the editor gave for HTTPS remotes, per project, remote
 * URL and editor user, as Node-RED's authCache keeps them: in memory only, so they are never at
 * rest on disk, and lost at a restart (the editor asks again on `git_auth_failed`).
 */

interface HttpAuth {
  username: string;
  password: string;
}

export class RemoteAuth {
  private readonly entries = new Map<string, HttpAuth>();

  set(project: string, url: string, user: string, auth: { username?: unknown; password?: unknown }): void {
    if (typeof auth.username !== 'string' || typeof auth.password !== 'string') return;
    this.entries.set(key(project, url, user), { username: auth.username, password: auth.password });
  }

  /**
   * What git needs to reach `url` as `user`: the credentials go in git's environment-only
   * configuration as a Basic header, so they appear neither in its arguments (visible to `ps`) nor
   * in .git/config.
   */
  env(project: string, url: string | undefined, user: string): NodeJS.ProcessEnv {
    const auth = url === undefined ? undefined : this.entries.get(key(project, url, user));
    if (auth === undefined) return {};
    const basic = Buffer.from(`${auth.username}:${auth.password}`).toString('base64');
    return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
  }

  forgetProject(project: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${project}\n`)) this.entries.delete(k);
  }
}

function key(project: string, url: string, user: string): string {
  return `${project}\n${url}\n${user}`;
}
