import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A project's flows in the Projects tests: one tab holding one inject node, whose name tells versions apart. */
export const tab = { id: 't1', type: 'tab', label: 'Flow 1' };
export const inject = (name: string) => ({ id: 'n1', type: 'inject', z: 't1', name, wires: [] });

/** Runs git in `cwd` as the given committer, so no user's or machine's git config is needed. */
export const gitAs = (name: string, email: string) => (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', `user.name=${name}`, '-c', `user.email=${email}`, ...args], { cwd, encoding: 'utf8' });

/**
 * A bare repository `<scratch>/repos/flows.git` holding one commit ("Start") of a Node-RED project:
 * a package.json naming `flows.json` and `flows_cred.json`, and `flows` as its flows file. Returns
 * the bare repository's path; the folder `repos` is what a git server under test serves.
 */
export async function seedRemote(scratch: string, flows: unknown[], git = gitAs('CI', 'ci@example.test'), name = 'remote'): Promise<string> {
  const bare = path.join(scratch, 'repos', 'flows.git');
  await mkdir(path.dirname(bare));
  git(scratch, 'init', '-q', '--bare', '-b', 'main', bare);
  const work = path.join(scratch, 'work');
  await mkdir(work);
  git(work, 'init', '-q', '-b', 'main');
  const settings = { flowFile: 'flows.json', credentialsFile: 'flows_cred.json' };
  await writeFile(path.join(work, 'package.json'), JSON.stringify({ name, version: '0.0.1', 'node-red': { settings } }, null, 4));
  await writeFile(path.join(work, 'flows.json'), JSON.stringify(flows, null, 4));
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'Start');
  git(work, 'push', '-q', bare, 'main');
  return bare;
}
